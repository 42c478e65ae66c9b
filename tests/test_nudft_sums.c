/* The sums provider of the NUDFT operator (mr_nudft_opts.sums, solver/linop.h): an operator that
 * obtains Q and each coil's F^H d from a provider equals the one that computes them itself, and it
 * asks the provider exactly once for Q (real weights, the Q grid) and once per coil and adjoint for
 * F^H d (complex weights, the image grid). The provider here is the CPU kernel itself, so on the
 * host every result must be bit-identical; on a GPU backend (when one is usable) the provider's CPU
 * sums go through host copies and the results agree within float32 rounding (relative L2 1e-4). A
 * failing provider fails create and adjoint with its message. Then the provider of `mpirun mrirecon
 * recon` (recon/cluster/mpi_recon.h) on a one-process communicator: F^H d bit-identical, Q within float32
 * rounding (its mirrored slabs use longer rows: relative L2 <= 1e-6), the normal's result too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recon/cluster/mpi_comm.h"
#include "recon/cluster/mpi_recon.h"
#include "solver/linop.h"
#include "solver/nudft.h"
#include "test_op_random.h"
#include "testutil.h"

typedef struct {
    int q_calls, fhd_calls, fail;
    int64_t matrix[3];
    int bad_grid;
} provider;

static mr_status sums(void *ctx, const mr_grid *g, const float *traj, const float *a, int real_weights, int64_t m,
                      float *out)
{
    provider *p = ctx;
    if (p->fail)
        return mr_error(MR_EIO, "provider failed on purpose");
    const mr_grid want = real_weights ? mr_grid_q(p->matrix) : mr_grid_image(p->matrix);
    p->bad_grid |= memcmp(g, &want, sizeof want) != 0;
    if (real_weights)
        p->q_calls++;
    else
        p->fhd_calls++;
    return mr_nudft_adjoint(g, traj, a, real_weights, m, out, 1);
}

/* The results [own, provider][adjoint, normal] and the random inputs of one check. */
static void free_inputs(float *r[2][2], float *traj, float *w, float *x, float *y)
{
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++)
            free(r[k][j]);
    free(traj);
    free(w);
    free(x);
    free(y);
}

static void check_backend(mr_backend *be, const int64_t matrix[3], int64_t m, int64_t nc, uint64_t *rng)
{
    const int64_t n = matrix[0] * matrix[1] * matrix[2];
    const int exact = !mr_backend_on_gpu(be);
    float *traj = test_random_traj(rng, matrix, m), *w = test_random_weights(rng, m);
    float *x = test_random_normal(rng, 2 * n * nc), *y = test_random_normal(rng, 2 * m * nc);
    float *r[2][2] = {{NULL, NULL}, {NULL, NULL}}; /* [own, provider][adjoint, normal] */
    provider p = {0, 0, 0, {matrix[0], matrix[1], matrix[2]}, 0};
    const mr_vecops *v = mr_backend_vecops(be);
    float *dx = mr_backend_upload(be, 2 * n * nc, x), *dy = mr_backend_upload(be, 2 * m * nc, y);
    float *dout = mr_backend_alloc(be, n * nc);
    CHECK(dx && dy && dout);
    for (int k = 0; k < 2 && dx && dy && dout; k++) {
        mr_nudft_opts o;
        mr_nudft_opts_default(&o);
        if (k) {
            o.sums.fn = sums;
            o.sums.ctx = &p;
        }
        mr_linop *f = NULL;
        CHECK_OK(mr_linop_nudft_create(&f, be, matrix, traj, m, w, nc, &o, NULL));
        if (!f)
            break;
        for (int j = 0; j < 2; j++) {
            r[k][j] = malloc((size_t)n * nc * 2 * sizeof(float));
            CHECK_OK(j ? mr_linop_normal(f, dx, dout) : mr_linop_adjoint(f, dy, dout));
            CHECK_OK(v->to_host(v->ctx, n * nc, r[k][j], dout));
        }
        mr_linop_free(f);
    }
    CHECK(p.q_calls == 1 && p.fhd_calls == nc && !p.bad_grid);
    if (p.q_calls != 1 || p.fhd_calls != nc)
        printf("  provider calls: Q %d (expected 1), F^H d %d (expected %lld)\n", p.q_calls, p.fhd_calls, (long long)nc);
    for (int j = 0; j < 2; j++)
        if (r[0][j] && r[1][j]) {
            const double e = test_rel_l2_ff(r[1][j], r[0][j], n * nc);
            printf("%s %lldx%lldx%lld, %lld coils, %s: provider vs own kernels, relative L2 %.3g (%s)\n",
                   mr_backend_name(be), (long long)matrix[0], (long long)matrix[1], (long long)matrix[2],
                   (long long)nc, j ? "normal (Q)" : "adjoint (F^H d)", e, exact ? "must be 0" : "bound 1e-4");
            CHECK(exact ? memcmp(r[0][j], r[1][j], (size_t)n * nc * 2 * sizeof(float)) == 0 : e <= 1e-4);
        }

    /* a failing provider: create fails with its message (Q); without the Toeplitz normal, the adjoint */
    p.fail = 1;
    mr_nudft_opts o;
    mr_nudft_opts_default(&o);
    o.sums.fn = sums;
    o.sums.ctx = &p;
    mr_linop *f = NULL;
    CHECK(mr_linop_nudft_create(&f, be, matrix, traj, m, w, nc, &o, NULL) == MR_EIO);
    CHECK(!f && strstr(mr_last_error(), "on purpose"));
    o.fast_normal = 0;
    CHECK_OK(mr_linop_nudft_create(&f, be, matrix, traj, m, w, nc, &o, NULL));
    if (f && dy && dout) {
        CHECK(mr_linop_adjoint(f, dy, dout) == MR_EIO);
        CHECK(strstr(mr_last_error(), "on purpose") != NULL);
    }
    mr_clear_error();
    mr_linop_free(f);
    v->release(v->ctx, dx);
    v->release(v->ctx, dy);
    v->release(v->ctx, dout);
    free_inputs(r, traj, w, x, y);
}

/* The MPI reconstruction's provider in one process against the operator's own kernels. */
static void check_mpi_provider(mr_backend *be, const int64_t matrix[3], int64_t m, int64_t nc, uint64_t *rng)
{
    const int64_t n = matrix[0] * matrix[1] * matrix[2];
    float *traj = test_random_traj(rng, matrix, m), *w = test_random_weights(rng, m);
    float *x = test_random_normal(rng, 2 * n * nc), *y = test_random_normal(rng, 2 * m * nc);
    float *r[2][2] = {{NULL, NULL}, {NULL, NULL}};
    mr_comm *comm = NULL;
    mr_mpi_recon *mp = NULL;
    mr_split_opts so;
    mr_split_opts_default(&so);
    so.threads = 2;
    CHECK_OK(mr_comm_init(&comm));
    if (comm)
        CHECK_OK(mr_mpi_recon_create(comm, &so, &mp));
    for (int k = 0; k < 2 && mp; k++) {
        mr_nudft_opts o;
        mr_nudft_opts_default(&o);
        if (k) {
            o.sums.fn = mr_mpi_recon_sums;
            o.sums.ctx = mp;
        }
        mr_linop *f = NULL;
        CHECK_OK(mr_linop_nudft_create(&f, be, matrix, traj, m, w, nc, &o, NULL));
        for (int j = 0; j < 2 && f; j++) {
            r[k][j] = malloc((size_t)n * nc * 2 * sizeof(float));
            CHECK_OK(j ? mr_linop_normal(f, x, r[k][j]) : mr_linop_adjoint(f, y, r[k][j]));
        }
        mr_linop_free(f);
    }
    for (int j = 0; j < 2; j++)
        if (r[0][j] && r[1][j]) {
            const double e = test_rel_l2_ff(r[1][j], r[0][j], n * nc);
            printf("mpi_recon provider, one process, %lldx%lldx%lld, %lld coils, %s: relative L2 %.3g (%s)\n",
                   (long long)matrix[0], (long long)matrix[1], (long long)matrix[2], (long long)nc,
                   j ? "normal (Q)" : "adjoint (F^H d)", e, j ? "bound 1e-6" : "must be 0");
            CHECK(j ? e <= 1e-6 : memcmp(r[0][j], r[1][j], (size_t)n * nc * 2 * sizeof(float)) == 0);
        }
    if (mp)
        CHECK_OK(mr_mpi_recon_end(mp, 0)); /* nobody to tell */
    mr_mpi_recon_free(mp);
    mr_comm_finalize(comm);
    free_inputs(r, traj, w, x, y);
}

int main(void)
{
    if (mr_comm_launcher_size() > 0) {
        fprintf(stderr, "test_nudft_sums: started by an MPI launcher; this test is for one process\n");
        return TEST_SKIP;
    }
    uint64_t rng = test_seed();
    const int64_t m2[3] = {20, 15, 1}, m3[3] = {8, 7, 6};
    const mr_device_sel sels[2] = {{.kind = MR_DEVICE_CPU, .index = -1}, {.kind = MR_DEVICE_GPU, .index = -1}};
    for (int s = 0; s < 2; s++) {
        mr_backend *be = NULL;
        if (mr_backend_create(&be, sels[s], 2) != MR_OK) {
            printf("no %s backend here: %s\n", s ? "GPU" : "CPU", mr_last_error());
            mr_clear_error();
            CHECK(s == 1);
            continue;
        }
        check_backend(be, m2, 333, 1, &rng);
        check_backend(be, m3, 257, 3, &rng);
        if (s == 0) {
            check_mpi_provider(be, m2, 301, 1, &rng);
            check_mpi_provider(be, m3, 211, 2, &rng);
        }
        mr_backend_free(be);
    }
    return test_finish("test_nudft_sums");
}
