/* The operators of solver/linop.h on the host: adjoint and normal tests for every operator and every
 * composition (tests/linop_check.h), values against direct computations, and the error paths.
 *
 * Bounds (fresh random inputs each run): adjointness 1e-5 relative (float sums; measured ~1e-8);
 * normal against adjoint(forward): 1e-6 where the normal is the same arithmetic reordered (identity,
 * maps, differences, compositions of those), 1e-4 where it goes through the Toeplitz embedding
 * (as test_toeplitz; measured ~3e-7); NUDFT forward and adjoint against the float64 reference 1e-5. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linop_check.h"
#include "solver/nudft.h"
#include "solver/regularizer.h"

static uint64_t rng;

static float *random_maps(int64_t n, int64_t c) { return test_random_normal(&rng, 2 * n * c); }

/* identity, maps, differences: exact values and the checks */
static void image_operators(mr_backend *be, const int64_t matrix[3])
{
    const int64_t n = matrix[0] * matrix[1] * matrix[2], nc = 3;
    const int64_t dims[4] = {matrix[0], matrix[1], matrix[2], 1};
    char label[128];
    float *x = test_random_normal(&rng, 2 * n), *y = malloc((size_t)n * nc * 2 * sizeof(float));
    float *z = malloc((size_t)n * 2 * sizeof(float));

    mr_linop *id = NULL;
    CHECK_OK(mr_linop_identity(&id, be, dims, 2.5));
    if (id) {
        snprintf(label, sizeof label, "identity 2.5 %lldx%lldx%lld", (long long)matrix[0], (long long)matrix[1],
                 (long long)matrix[2]);
        lc_check(label, id, &rng, 1e-6, 1e-6);
        CHECK_OK(lc_apply(id, mr_linop_normal, x, n, z, n));
        double worst = 0;
        for (int64_t i = 0; i < 2 * n; i++)
            worst = fmax(worst, fabs((double)z[i] - 6.25 * x[i]) / (1e-30 + fabs(6.25 * x[i])));
        CHECK_LE("identity: normal = 6.25 x, max relative difference", worst, 1e-6);
    }

    float *maps = random_maps(n, nc);
    mr_linop *s = NULL;
    CHECK_OK(mr_linop_sens_create(&s, be, matrix, nc, maps));
    if (s) {
        snprintf(label, sizeof label, "sensitivity maps (3 coils) %lldx%lldx%lld", (long long)matrix[0],
                 (long long)matrix[1], (long long)matrix[2]);
        lc_check(label, s, &rng, 1e-5, 1e-6);
        CHECK_OK(lc_apply(s, mr_linop_forward, x, n, y, n * nc));
        double worst = 0;
        for (int64_t c = 0; c < nc; c++)
            for (int64_t v = 0; v < n; v++) {
                const float *m = maps + 2 * (c * n + v);
                const double re = (double)m[0] * x[2 * v] - (double)m[1] * x[2 * v + 1];
                const double im = (double)m[0] * x[2 * v + 1] + (double)m[1] * x[2 * v];
                worst = fmax(worst, hypot(y[2 * (c * n + v)] - re, y[2 * (c * n + v) + 1] - im) / (1e-30 + hypot(re, im)));
            }
        CHECK_LE("maps: forward S_c x voxel by voxel, max relative difference", worst, 1e-6);
        int64_t dom[4], cod[4];
        mr_linop_dom(s, dom);
        mr_linop_cod(s, cod);
        CHECK(dom[3] == 1 && cod[3] == nc && cod[0] == matrix[0] && mr_linop_cod_size(s) == n * nc);
    }

    mr_linop *fd = NULL;
    CHECK_OK(mr_linop_fd_create(&fd, be, matrix));
    if (fd) {
        snprintf(label, sizeof label, "finite differences %lldx%lldx%lld", (long long)matrix[0], (long long)matrix[1],
                 (long long)matrix[2]);
        lc_check(label, fd, &rng, 1e-5, 1e-6);
        /* its normal is the gradient regulariser R^H R of solver/regularizer.c */
        mr_regularizer reg = {MR_REG_GRADIENT, {matrix[0], matrix[1], matrix[2]}, 1};
        CHECK_OK(mr_reg_apply(&reg, x, y));
        CHECK_OK(lc_apply(fd, mr_linop_normal, x, n, z, n));
        CHECK_LE("differences: normal vs mr_reg_apply, rel L2", test_rel_l2_ff(z, y, 2 * n), 1e-7);
        /* ||R x||^2 = mr_reg_value */
        float *g = malloc((size_t)mr_linop_cod_size(fd) * 2 * sizeof(float));
        CHECK_OK(lc_apply(fd, mr_linop_forward, x, n, g, mr_linop_cod_size(fd)));
        const double rx = lc_norm(g, mr_linop_cod_size(fd));
        CHECK_LE("differences: | ||R x||^2 - mr_reg_value | / mr_reg_value", fabs(rx * rx - mr_reg_value(&reg, x)) /
                 mr_reg_value(&reg, x), 1e-6);
        free(g);
    }

    /* compositions of these: chain, sum, normal_of, scaled */
    mr_linop *ch = NULL, *nfd = NULL, *sc = NULL, *sum = NULL, *ns = NULL;
    if (s && fd && id) {
        CHECK_OK(mr_linop_chain(&ch, id, s)); /* S (2.5 x) */
        CHECK_OK(mr_linop_normal_of(&nfd, fd));
        CHECK_OK(mr_linop_chain(&sc, nfd, id)); /* 2.5 R^H R */
        CHECK_OK(mr_linop_normal_of(&ns, s));
        CHECK_OK(mr_linop_sum(&sum, ns, sc)); /* S^H S + 2.5 R^H R */
        if (ch)
            lc_check("chain(identity, maps)", ch, &rng, 1e-5, 1e-6);
        if (sum)
            lc_check("sum(normal_of(maps), chain(normal_of(differences), 2.5 I))", sum, &rng, 1e-5, 1e-6);
        if (nfd)
            lc_check("normal_of(differences)", nfd, &rng, 1e-5, 1e-5);
    }
    mr_linop_free(ch);
    mr_linop_free(nfd);
    mr_linop_free(sc);
    mr_linop_free(sum);
    mr_linop_free(ns);
    mr_linop_free(id);
    mr_linop_free(s);
    mr_linop_free(fd);
    free(maps);
    free(x);
    free(y);
    free(z);
}

/* NUDFT (2 coils, weights) against the float64 reference; its compositions */
static void nudft_operators(mr_backend *be, const int64_t matrix[3], int64_t m, mr_basis basis)
{
    const int64_t n = matrix[0] * matrix[1] * matrix[2], nc = 2;
    float *traj = test_random_traj(&rng, matrix, m), *w = test_random_weights(&rng, m);
    char label[160];
    const char *bname = basis == MR_BASIS_BOX ? "box" : "dirac";
    mr_nudft_opts o;
    mr_nudft_opts_default(&o);
    o.basis = basis;
    mr_linop *f = NULL, *slow = NULL;
    mr_nudft_info info;
    CHECK_OK(mr_linop_nudft_create(&f, be, matrix, traj, m, w, nc, &o, &info));
    o.fast_normal = 0;
    CHECK_OK(mr_linop_nudft_create(&slow, be, matrix, traj, m, w, nc, &o, NULL));
    if (!f || !slow)
        goto done;
    CHECK(info.q_pairs == (int64_t)(matrix[0] > 1 ? 2 * matrix[0] : 1) * (matrix[1] > 1 ? 2 * matrix[1] : 1) *
                              (matrix[2] > 1 ? 2 * matrix[2] : 1) * m);
    snprintf(label, sizeof label, "NUDFT %s weighted 2 coils %lldx%lldx%lld M=%lld (Toeplitz normal)", bname,
             (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], (long long)m);
    lc_check(label, f, &rng, 1e-5, 1e-4);
    snprintf(label, sizeof label, "NUDFT %s weighted 2 coils %lldx%lldx%lld (normal = adjoint(forward))", bname,
             (long long)matrix[0], (long long)matrix[1], (long long)matrix[2]);
    lc_check(label, slow, &rng, 1e-5, 1e-6);

    /* values: forward of coil 1 = sqrt(w) Phi / N * (float64 forward sum) */
    {
        const mr_grid g = mr_grid_image(matrix);
        float *x = test_random_normal(&rng, 2 * n * nc), *y = malloc((size_t)m * nc * 2 * sizeof(float));
        double *ref = malloc((size_t)m * 2 * sizeof(double));
        CHECK_OK(lc_apply(f, mr_linop_forward, x, n * nc, y, m * nc));
        mr_nudft_forward_ref(&g, traj, x + 2 * n, m, ref);
        for (int64_t k = 0; k < m; k++) {
            double phi = 1;
            for (int a = 0; a < 3 && basis == MR_BASIS_BOX; a++)
                if (matrix[a] > 1) {
                    const double u = M_PI * traj[3 * k + a] / (double)matrix[a];
                    phi *= u == 0 ? 1 : sin(u) / u;
                }
            const double sk = sqrt((double)w[k]) * phi / (double)n;
            ref[2 * k] *= sk;
            ref[2 * k + 1] *= sk;
        }
        snprintf(label, sizeof label, "NUDFT %s forward (coil 1) vs float64 reference, rel L2", bname);
        CHECK_LE(label, test_rel_l2(y + 2 * m, ref, 2 * m), 1e-5);
        free(x);
        free(y);
        free(ref);
    }

    /* SENSE: chain(maps, NUDFT); its normal S^H T S against the definition; the system with both
     * regularisers */
    float *maps = random_maps(n, nc);
    const int64_t dims[4] = {matrix[0], matrix[1], matrix[2], 1};
    mr_linop *s = NULL, *e = NULL, *ne = NULL, *fd = NULL, *nfd = NULL, *lam = NULL, *reg = NULL, *sys = NULL,
             *sys2 = NULL, *tik = NULL;
    CHECK_OK(mr_linop_sens_create(&s, be, matrix, nc, maps));
    if (s)
        CHECK_OK(mr_linop_chain(&e, s, f));
    if (e) {
        snprintf(label, sizeof label, "SENSE chain(maps, NUDFT %s) %lldx%lldx%lld", bname, (long long)matrix[0],
                 (long long)matrix[1], (long long)matrix[2]);
        lc_check(label, e, &rng, 1e-5, 1e-4);
        CHECK_OK(mr_linop_normal_of(&ne, e));
        CHECK_OK(mr_linop_fd_create(&fd, be, matrix));
        CHECK_OK(mr_linop_normal_of(&nfd, fd));
        CHECK_OK(mr_linop_identity(&lam, be, dims, 1e-3));
        CHECK_OK(mr_linop_chain(&reg, nfd, lam));
        CHECK_OK(mr_linop_sum(&sys, ne, reg));
        CHECK_OK(mr_linop_sum(&sys2, ne, lam));
        if (sys && sys2) {
            lc_check("SENSE system E^H E + 1e-3 R^H R (Hermitian)", sys, &rng, 1e-5, 1e-5);
            lc_check("SENSE system E^H E + 1e-3 I (Hermitian)", sys2, &rng, 1e-5, 1e-5);
            /* sum forward = normal(E) x + 1e-3 x */
            float *x = test_random_normal(&rng, 2 * n), *a = malloc((size_t)n * 2 * sizeof(float)),
                  *b = malloc((size_t)n * 2 * sizeof(float));
            CHECK_OK(lc_apply(sys2, mr_linop_forward, x, n, a, n));
            CHECK_OK(lc_apply(e, mr_linop_normal, x, n, b, n));
            for (int64_t i = 0; i < 2 * n; i++)
                b[i] += 1e-3f * x[i];
            CHECK_LE("sum: forward = normal(E) x + 1e-3 x, rel L2", test_rel_l2_ff(a, b, 2 * n), 1e-6);
            /* mr_linop_normal_system builds the same systems */
            mr_linop *ns1 = NULL, *ns2 = NULL;
            CHECK_OK(mr_linop_normal_system(&ns1, e, fd, 1e-3));
            CHECK_OK(mr_linop_normal_system(&ns2, e, NULL, 1e-3));
            if (ns1 && ns2) {
                CHECK_OK(lc_apply(ns2, mr_linop_forward, x, n, b, n));
                CHECK(memcmp(a, b, (size_t)n * 2 * sizeof(float)) == 0);
                CHECK_OK(lc_apply(sys, mr_linop_forward, x, n, a, n));
                CHECK_OK(lc_apply(ns1, mr_linop_forward, x, n, b, n));
                CHECK(memcmp(a, b, (size_t)n * 2 * sizeof(float)) == 0);
            }
            mr_linop_free(ns1);
            mr_linop_free(ns2);
            free(x);
            free(a);
            free(b);
        }
        /* the Toeplitz operator alone is Hermitian */
        CHECK_OK(mr_linop_normal_of(&tik, f));
        if (tik)
            lc_check("normal_of(NUDFT): the batched Toeplitz normal", tik, &rng, 1e-5, 1e-4);
    }
    mr_linop *list[] = {s, e, ne, fd, nfd, lam, reg, sys, sys2, tik};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        mr_linop_free(list[i]);
    free(maps);
done:
    mr_linop_free(f);
    mr_linop_free(slow);
    free(traj);
    free(w);
}

static void error_paths(mr_backend *be)
{
    const int64_t a[4] = {4, 4, 1, 1}, b[4] = {5, 4, 1, 1};
    mr_linop *x = NULL, *y = NULL, *out = (mr_linop *)1;
    CHECK_OK(mr_linop_identity(&x, be, a, 1.0));
    CHECK_OK(mr_linop_identity(&y, be, b, 1.0));
    CHECK(mr_linop_chain(&out, x, y) == MR_EINVAL);
    CHECK(out == NULL);
    printf("message: %s\n", mr_last_error());
    CHECK(strstr(mr_last_error(), "16") && strstr(mr_last_error(), "20"));
    CHECK(mr_linop_sum(&out, x, y) == MR_EINVAL && out == NULL);
    CHECK(mr_linop_identity(&out, be, a, NAN) == MR_EINVAL);
    float v[32] = {0};
    CHECK(mr_linop_forward(x, v, v) == MR_EINVAL); /* the same vector in and out */
    CHECK(mr_linop_forward(x, NULL, v) == MR_EINVAL);
    const int64_t bad[3] = {0, 4, 1};
    CHECK(mr_linop_fd_create(&out, be, bad) != MR_OK);
    CHECK(mr_linop_sens_create(&out, be, a, 0, v) == MR_EINVAL);
    const float traj[6] = {0.5f, 1.0f, 0.0f, NAN, 0.0f, 0.0f};
    CHECK(mr_linop_nudft_create(&out, be, a, traj, 2, NULL, 1, NULL, NULL) == MR_EINVAL);
    CHECK(strstr(mr_last_error(), "sample 1") != NULL);
    /* references: a composition keeps its parts alive after the caller drops them */
    mr_linop *ch = NULL;
    CHECK_OK(mr_linop_chain(&ch, x, x));
    mr_linop_free(x);
    mr_linop_free(y);
    if (ch) {
        float in[32], o2[32];
        for (int i = 0; i < 32; i++)
            in[i] = (float)i;
        CHECK_OK(mr_linop_forward(ch, in, o2));
        CHECK(memcmp(in, o2, sizeof in) == 0);
    }
    mr_linop_free(ch);
}

int main(void)
{
    rng = test_seed();
    mr_backend *be = NULL;
    const mr_device_sel cpu = {.kind = MR_DEVICE_CPU, .index = -1};
    CHECK_OK(mr_backend_create(&be, cpu, 2));
    if (!be)
        return test_finish("test_linop");
    CHECK(!mr_backend_on_gpu(be) && mr_backend_gpu_index(be) == -1 && mr_backend_threads(be) == 2);
    printf("backend: %s\n", mr_backend_name(be));
    const int64_t m2[3] = {24, 17, 1}, m3[3] = {9, 7, 5}, big[3] = {160, 130, 1};
    image_operators(be, m2);
    image_operators(be, m3);
    image_operators(be, big); /* above the threading threshold */
    nudft_operators(be, m2, 701, MR_BASIS_BOX);
    nudft_operators(be, m3, 413, MR_BASIS_DIRAC);
    error_paths(be);
    mr_backend_free(be);
    return test_finish("test_linop");
}
