/* Backend selection: an explicit GPU request without a usable GPU fails with MR_ENODEV and a
 * message; AUTO falls back to the CPU; device parsing (solver/backend.h). Where a GPU is usable, the GPU operator's
 * adjoint and Toeplitz normal (Q and F^H d on the GPU) match the CPU operator's: relative L2 <= 1e-4. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "solver/op.h"
#include "test_op_random.h"
#include "testutil.h"

/* GPU operator against the CPU operator on a random 2D and 3D problem. */
static void compare_gpu_cpu(uint64_t *rng, const int64_t matrix[3], int64_t m)
{
    const int64_t nv = matrix[0] * matrix[1] * matrix[2];
    float *traj = test_random_traj(rng, matrix, m), *w = test_random_weights(rng, m);
    float *y = test_random_normal(rng, 2 * m), *x = test_random_normal(rng, 2 * nv);
    float *a_gpu = malloc((size_t)nv * 2 * sizeof(float)), *a_cpu = malloc((size_t)nv * 2 * sizeof(float));
    mr_op_opts o;
    mr_op_opts_default(&o);
    mr_op *gpu = NULL, *cpu = NULL;
    o.device = MR_DEVICE_GPU;
    CHECK_OK(mr_op_create(&gpu, matrix, traj, m, w, &o));
    o.device = MR_DEVICE_CPU;
    CHECK_OK(mr_op_create(&cpu, matrix, traj, m, w, &o));
    if (gpu && cpu) {
        mr_op_info info;
        mr_op_get_info(gpu, &info);
        printf("gpu backend: %s\n", info.backend);
        CHECK(strncmp(info.backend, "gpu:", 4) == 0);
        CHECK_OK(mr_op_adjoint(gpu, y, a_gpu));
        CHECK_OK(mr_op_adjoint(cpu, y, a_cpu));
        CHECK_LE("GPU vs CPU operator: F^H W y, rel L2", test_rel_l2_ff(a_gpu, a_cpu, 2 * nv), 1e-4);
        CHECK_OK(mr_op_normal(gpu, x, a_gpu));
        CHECK_OK(mr_op_normal(cpu, x, a_cpu));
        CHECK_LE("GPU vs CPU operator: Toeplitz normal (Q on the GPU), rel L2", test_rel_l2_ff(a_gpu, a_cpu, 2 * nv), 1e-4);
    }
    mr_op_destroy(gpu);
    mr_op_destroy(cpu);
    free(traj);
    free(w);
    free(y);
    free(x);
    free(a_gpu);
    free(a_cpu);
}

int main(void)
{
    mr_op_opts o;
    mr_op_opts_default(&o);
    CHECK(o.device == MR_DEVICE_AUTO && o.basis == MR_BASIS_BOX && o.fast_normal == 1 && o.gpu_index == -1);
    mr_device_sel sel;
    CHECK_OK(mr_device_parse("cpu", &sel));
    CHECK(sel.kind == MR_DEVICE_CPU);
    CHECK_OK(mr_device_parse("gpu:3", &sel));
    CHECK(sel.kind == MR_DEVICE_GPU && sel.index == 3);
    char text[MR_DEVICE_TEXT];
    mr_device_format(sel, text, sizeof text);
    CHECK(strcmp(text, "gpu:3") == 0);
    CHECK_OK(mr_device_parse("gpu", &sel));
    CHECK(sel.kind == MR_DEVICE_GPU && sel.index == -1);
    CHECK_OK(mr_device_parse("auto", &sel));
    CHECK(sel.kind == MR_DEVICE_AUTO);
    mr_op_opts_set_device(&o, sel);
    CHECK(o.device == MR_DEVICE_AUTO && o.gpu_index == -1 && o.ngpus == 0 && !o.gpu_all);
    /* several GPUs for one reconstruction: a list (repeats allowed: tests on one GPU) or all */
    CHECK_OK(mr_device_parse("gpu:1,0,1", &sel));
    CHECK(sel.kind == MR_DEVICE_GPU && sel.index == 1 && sel.ngpus == 3 && sel.gpus[1] == 0 && sel.gpus[2] == 1);
    mr_device_format(sel, text, sizeof text);
    CHECK(strcmp(text, "gpu:1,0,1") == 0);
    mr_op_opts_set_device(&o, sel);
    mr_device_sel back = mr_op_opts_device(&o);
    CHECK(back.ngpus == 3 && back.gpus[2] == 1 && back.index == 1 && !back.all);
    CHECK_OK(mr_device_parse("gpu:all", &sel));
    CHECK(sel.kind == MR_DEVICE_GPU && sel.all && sel.index == -1 && sel.ngpus == 0);
    mr_device_format(sel, text, sizeof text);
    CHECK(strcmp(text, "gpu:all") == 0);
    CHECK_OK(mr_device_parse("gpu:0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", &sel));
    CHECK(sel.ngpus == MR_DEVICE_MAX_GPUS);
    CHECK(mr_device_parse("gpu:0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", &sel) == MR_EINVAL);
    CHECK(strstr(mr_last_error(), "at most 16 GPUs") != NULL);
    CHECK_OK(mr_device_parse("auto", &sel));
    mr_op_opts_set_device(&o, sel);
    const char *bad[] = {"", "GPU", "gpu:", "gpu:-1", "gpu:1x", "cuda", "gpu:99999999999", "gpu:0,", "gpu:,1",
                         "gpu:0,,1", "gpu:0, 1", "gpu:al", "gpu:all,0", "gpu:0,-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(mr_device_parse(bad[i], &sel) == MR_EINVAL);
        CHECK(strstr(mr_last_error(), "is not auto, cpu, gpu, gpu:N, gpu:N,M,... or gpu:all") != NULL);
        CHECK(strstr(mr_last_error(), "--device") == NULL); /* the caller names the option, once */
    }
    /* resolving: the list's GPUs must all exist */
    int gpus[MR_DEVICE_MAX_GPUS], ng = -1;
    CHECK_OK(mr_device_parse("cpu", &sel));
    CHECK_OK(mr_device_resolve_gpus(sel, gpus, &ng));
    CHECK(ng == 0);
    char past[32];
    snprintf(past, sizeof past, "gpu:0,%d", mr_gpu_count());
    CHECK_OK(mr_device_parse(past, &sel));
    CHECK(mr_device_resolve_gpus(sel, gpus, &ng) == MR_ENODEV);
    CHECK(strstr(mr_last_error(), past) != NULL);
    printf("message: %s\n", mr_last_error());
    if (mr_gpu_count() > 0) {
        CHECK_OK(mr_device_parse("gpu:all", &sel));
        CHECK_OK(mr_device_resolve_gpus(sel, gpus, &ng));
        CHECK(ng == (mr_gpu_count() < MR_DEVICE_MAX_GPUS ? mr_gpu_count() : MR_DEVICE_MAX_GPUS) && gpus[0] == 0);
        CHECK_OK(mr_device_parse("gpu:0,0", &sel));
        CHECK_OK(mr_device_resolve_gpus(sel, gpus, &ng));
        CHECK(ng == 2 && gpus[0] == 0 && gpus[1] == 0);
    }

    const int64_t matrix[3] = {8, 8, 1};
    const float traj[6] = {0.5f, -1.0f, 0.0f, 2.0f, 3.5f, 0.0f};
    const int count = mr_gpu_count();
    printf("usable GPUs: %d\n", count);
    mr_op *op = NULL;
    mr_op_opts_default(&o);
    o.device = MR_DEVICE_GPU;
    o.gpu_index = count; /* one past the last: never usable */
    CHECK(mr_op_create(&op, matrix, traj, 2, NULL, &o) == MR_ENODEV);
    CHECK(op == NULL);
    CHECK(strstr(mr_last_error(), "gpu") != NULL);
    printf("message: %s\n", mr_last_error());
    if (count == 0) {
        o.gpu_index = -1;
        CHECK(mr_op_create(&op, matrix, traj, 2, NULL, &o) == MR_ENODEV);
        CHECK(strlen(mr_last_error()) > 10);
        printf("message: %s\n", mr_last_error());
        o.device = MR_DEVICE_AUTO;
        CHECK_OK(mr_op_create(&op, matrix, traj, 2, NULL, &o));
        mr_op_info info;
        mr_op_get_info(op, &info);
        printf("auto backend: %s\n", info.backend);
        CHECK(strncmp(info.backend, "cpu (", 5) == 0);
        mr_op_destroy(op);
    }
    if (count > 0) {
        uint64_t rng = test_seed();
        const int64_t m2[3] = {48, 40, 1}, m3[3] = {16, 12, 10};
        compare_gpu_cpu(&rng, m2, 3001);
        compare_gpu_cpu(&rng, m3, 2001);
    }
    o.device = MR_DEVICE_CPU;
    CHECK(mr_op_create(&op, matrix, traj, 0, NULL, &o) == MR_EINVAL);
    const float bad_w[2] = {1.0f, -2.0f};
    CHECK(mr_op_create(&op, matrix, traj, 2, bad_w, &o) == MR_EINVAL);
    CHECK(strstr(mr_last_error(), "weight 1") != NULL);
    return test_finish("test_op_device");
}
