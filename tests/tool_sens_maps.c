/* tool_sens_maps SCAN OUT.h5 [--method walsh|espirit] [--kernel K] [--threshold T] [--crop C] [--calib N]
 *                [--threads T] [--repeat R] [--dump RAW] [--gpu N]
 * Coil maps estimated from a multi-coil scan (any input format) by the Walsh/Inati estimator
 * (solver/coilmaps.h) or ESPIRiT (solver/espirit.h), or read from a BART array (--method cfl:NAME, [X][Y][Z][C],
 * e.g. `bart ecalib -m 1`), for the measurements of docs/COILMAPS.md:
 *  - prints the time (the best of R runs), the calibration and, for ESPIRiT, the kernels kept and each
 *    stage's time (with --gpu N the per-voxel stage runs on GPU N: gpu/espirit.h; the bench of the 3D
 *    target, docs/COILMAPS.md);
 *  - when the scan holds true maps S and a truth image: the map error inside the object (truth > 0), RMS
 *    over its voxels of the phase-free distance between the estimated unit map s and S/||S||,
 *    sqrt(2 - 2 |<s, S/||S||>|) (0 for a voxel cropped: then counted as cropped), the fraction of object
 *    voxels cropped, and the fraction of voxels outside the object whose maps are not zero;
 *  - writes OUT.h5: the scan with the estimated maps as /kspace/sens and, when it had true maps, its
 *    truth images weighted by ||S|| (the image unit-norm maps reconstruct, recon/pipeline/sens_estimate.h), so
 *    that `mrirecon recon OUT.h5` scores SENSE with these maps, and `--sens-maps OUT.h5` uses them for
 *    another file of the same scan (e.g. its BART pair).
 * Exit 0, 1 on a failed estimate, 2 on bad usage or an unreadable scan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "gpu/espirit.h"
#include "io/cfl.h"
#include "io/input.h"
#include "io/kspace_h5.h"
#include "maps_testutil.h"
#include "recon/pipeline/sens_estimate.h"
#include "solver/coilmaps.h"
#include "solver/espirit.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tool_sens_maps SCAN OUT.h5 [--method walsh|espirit] [--kernel K] [--threshold T] "
                        "[--crop C] [--calib N] [--threads T] [--repeat R] [--dump RAW] [--gpu N]\n");
        return 2;
    }
    const char *method = "espirit";
    mr_espirit_opts eo;
    mr_espirit_opts_default(&eo);
    mr_coilmaps_opts wo;
    mr_coilmaps_opts_default(&wo);
    int repeat = 1, gpu = -1;
    const char *dump = NULL;
    for (int i = 3; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--method"))
            method = v;
        else if (!strcmp(k, "--kernel"))
            eo.kernel = atoi(v);
        else if (!strcmp(k, "--threshold"))
            eo.threshold = atof(v);
        else if (!strcmp(k, "--floor"))
            eo.noise_floor = atof(v);
        else if (!strcmp(k, "--crop"))
            eo.crop = atof(v);
        else if (!strcmp(k, "--calib"))
            eo.calib = wo.calib = atoi(v);
        else if (!strcmp(k, "--threads"))
            eo.threads = wo.threads = atoi(v);
        else if (!strcmp(k, "--gpu"))
            gpu = atoi(v);
        else if (!strcmp(k, "--dump"))
            dump = v;
        else if (!strcmp(k, "--repeat"))
            repeat = atoi(v) > 0 ? atoi(v) : 1;
        else {
            fprintf(stderr, "tool_sens_maps: unknown option %s\n", k);
            return 2;
        }
    }
    mr_log_set_level(MR_LOG_WARN);
    mr_kspace *ks = NULL;
    if (mr_input_read_path(argv[1], NULL, 0, &ks) != MR_OK) {
        fprintf(stderr, "tool_sens_maps: %s\n", mr_last_error());
        return 2;
    }
    const int64_t N = mr_kspace_voxels(ks), C = ks->ncoils;
    float *maps = malloc((size_t)(N * C) * 2 * sizeof *maps), *eig = malloc((size_t)N * sizeof *eig);
    for (int64_t v = 0; v < N; v++)
        eig[v] = NAN;
    double best = INFINITY;
    int64_t calib[3] = {0, 0, 0}, kept = 0;
    mr_status st = MR_OK;
    for (int r = 0; r < repeat && st == MR_OK; r++) {
        const double t0 = mr_now();
        if (!strncmp(method, "cfl:", 4)) { /* maps of another program, e.g. BART's ecalib: [X][Y][Z][C] */
            int64_t dims[MR_CFL_DIMS];
            float *ext = NULL;
            st = mr_cfl_read(method + 4, dims, NULL, &ext);
            if (st == MR_OK && (dims[0] != ks->matrix[0] || dims[1] != ks->matrix[1] || dims[2] != ks->matrix[2] ||
                                dims[3] != C))
                st = mr_error(MR_EINVAL, "%s: maps %lldx%lldx%lldx%lld for a %lldx%lldx%lld scan with %lld coils",
                              method + 4, (long long)dims[0], (long long)dims[1], (long long)dims[2],
                              (long long)dims[3], (long long)ks->matrix[0], (long long)ks->matrix[1],
                              (long long)ks->matrix[2], (long long)C);
            if (st == MR_OK)
                memcpy(maps, ext, (size_t)(N * C) * 2 * sizeof *maps);
            free(ext);
        } else if (!strcmp(method, "walsh")) {
            st = mr_coilmaps_estimate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, &wo, maps, calib);
        } else {
            mr_espirit_calib cal;
            st = mr_espirit_calibrate(ks->matrix, ks->traj, ks->nsamples, ks->data, C, &eo, &cal);
            if (st == MR_OK) {
                memcpy(calib, cal.calib, sizeof calib);
                kept = cal.nkernels;
                printf("espirit calibration: %lld patches x %lld columns, %lld kernels kept; grid %.3f s, Gram %.3f "
                       "s, eigen %.3f s\n",
                       (long long)cal.nrows, (long long)cal.ncols, (long long)kept, cal.seconds_grid, cal.seconds_gram,
                       cal.seconds_eig);
                fflush(stdout);
                const double tm = mr_now();
                double kernel = 0;
                if (gpu >= 0)
                    st = mr_gpu_espirit_maps(gpu, &cal, ks->matrix, eo.crop, eo.iters, maps, eig, &kernel);
                else
                    st = mr_espirit_maps(&cal, ks->matrix, &eo, maps, eig);
                char where[64] = "host";
                if (gpu >= 0)
                    snprintf(where, sizeof where, "GPU %d, kernel %.4f s", gpu, kernel);
                printf("espirit maps: %.3f s (%s)\n", mr_now() - tm, where);
                mr_espirit_calib_free(&cal);
            }
        }
        best = fmin(best, mr_now() - t0);
    }
    if (st != MR_OK) {
        fprintf(stderr, "tool_sens_maps: %s\n", mr_last_error());
        return 1;
    }
    printf("%s: %lld coils, matrix %lldx%lldx%lld, calibration %lldx%lldx%lld, %.3f s (best of %d)\n", method,
           (long long)C, (long long)ks->matrix[0], (long long)ks->matrix[1], (long long)ks->matrix[2],
           (long long)calib[0], (long long)calib[1], (long long)calib[2], best, repeat);
    if (ks->sens && ks->truth) {
        double err2 = 0, tmax = 0;
        int64_t inside = 0, cropped = 0, outside = 0, outside_nz = 0;
        for (int64_t v = 0; v < N; v++)
            tmax = fmax(tmax, fabs(ks->truth[v]));
        for (int64_t v = 0; v < N; v++) {
            double ns = 0, nt = 0;
            const double dist = maps_distance(maps, ks->sens, C, N, v, &ns, &nt);
            if (fabs(ks->truth[v]) > 1e-3 * tmax) {
                inside++;
                if (ns == 0) {
                    cropped++;
                    continue;
                }
                err2 += dist * dist;
            } else {
                outside++;
                outside_nz += ns > 0;
            }
        }
        printf("maps vs truth: object %lld voxels, error %.4f (RMS over kept), cropped %.4f of the object; outside: "
               "%.4f of %lld voxels non-zero\n",
               (long long)inside, sqrt(err2 / (double)(inside - cropped > 0 ? inside - cropped : 1)),
               (double)cropped / (double)(inside ? inside : 1), (double)outside_nz / (double)(outside ? outside : 1),
               (long long)outside);
        mr_sens_weight_truth(ks);
    }
    if (!ks->sens && (st = mr_kspace_alloc_sens(ks)) != MR_OK) {
        fprintf(stderr, "tool_sens_maps: %s\n", mr_last_error());
        return 1;
    }
    memcpy(ks->sens, maps, (size_t)(N * C) * 2 * sizeof *maps);
    if (dump) { /* raw float32: the eigenvalue map [N] (NAN for Walsh), then the maps [C][N][2] */
        FILE *f = fopen(dump, "wb");
        if (!f || fwrite(eig, sizeof *eig, (size_t)N, f) != (size_t)N ||
            fwrite(maps, sizeof *maps, (size_t)(2 * N * C), f) != (size_t)(2 * N * C) || fclose(f) != 0)
            fprintf(stderr, "tool_sens_maps: cannot write %s\n", dump);
    }
    if ((st = mr_kspace_write(argv[2], ks)) != MR_OK) {
        fprintf(stderr, "tool_sens_maps: %s\n", mr_last_error());
        return 1;
    }
    free(maps);
    free(eig);
    mr_kspace_free(ks);
    return 0;
}
