/* tool_cfl_psnr IMAGE SCAN.h5 [OURS.h5]: the metrics of a BART image (IMAGE.hdr/.cfl, complex [X, Y, Z], e.g.
 * the output of `bart pics`) against the truth images of the mrirecon scan it was reconstructed
 * from, computed exactly as `mrirecon recon` computes them (solver/metrics.h: magnitudes, no
 * rescaling). Prints one line per truth: "bandlimited psnr_db 35.05 percent_error 8.49", and with
 * OURS.h5 (a mrirecon image file) the relative L2 difference ||BART - ours|| / ||ours||. Exit 0,
 * 1 when the image's grid is not the scan's matrix or the scan has no truth, 2 when a file cannot
 * be read. For scripts/compare_bart.sh (BART itself is not needed to build or test mrirecon). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/cfl.h"
#include "io/image_h5.h"
#include "io/kspace_h5.h"
#include "solver/metrics.h"

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: tool_cfl_psnr IMAGE SCAN.h5 [OURS.h5]\n");
        return 2;
    }
    int64_t dims[MR_CFL_DIMS];
    float *img = NULL;
    mr_kspace *ks = NULL;
    if (mr_cfl_read(argv[1], dims, NULL, &img) != MR_OK || mr_kspace_read(argv[2], &ks) != MR_OK) {
        fprintf(stderr, "tool_cfl_psnr: %s\n", mr_last_error());
        free(img);
        return 2;
    }
    int rc = 0;
    int64_t extra = 1;
    for (int i = 3; i < MR_CFL_DIMS; i++)
        extra *= dims[i];
    if (dims[0] != ks->matrix[0] || dims[1] != ks->matrix[1] || dims[2] != ks->matrix[2] || extra != 1) {
        fprintf(stderr, "tool_cfl_psnr: %s is %lldx%lldx%lld (x %lld), the scan's matrix %lldx%lldx%lld\n", argv[1],
                (long long)dims[0], (long long)dims[1], (long long)dims[2], (long long)extra, (long long)ks->matrix[0],
                (long long)ks->matrix[1], (long long)ks->matrix[2]);
        rc = 1;
    } else if (!ks->truth && !ks->truth_bl) {
        fprintf(stderr, "tool_cfl_psnr: %s has no truth images\n", argv[2]);
        rc = 1;
    }
    const float *truths[2] = {ks->truth_bl, ks->truth};
    const char *names[2] = {"bandlimited", "image"};
    for (int t = 0; rc == 0 && t < 2; t++) {
        mr_metrics m;
        if (!truths[t])
            continue;
        if (mr_metrics_compute(img, 1, truths[t], mr_kspace_voxels(ks), &m) != MR_OK) {
            rc = 2;
            break;
        }
        printf("%s psnr_db %.4f percent_error %.4f\n", names[t], m.psnr_db, m.percent_error);
    }
    if (rc == 0 && argc == 4) {
        float *ours = NULL;
        int64_t m[3];
        if (mr_image_h5_read(argv[3], &ours, m) != MR_OK) {
            fprintf(stderr, "tool_cfl_psnr: %s\n", mr_last_error());
            rc = 2;
        } else if (m[0] != dims[0] || m[1] != dims[1] || m[2] != dims[2]) {
            fprintf(stderr, "tool_cfl_psnr: %s is %lldx%lldx%lld\n", argv[3], (long long)m[0], (long long)m[1],
                    (long long)m[2]);
            rc = 1;
        } else {
            double d = 0, b = 0;
            for (int64_t i = 0; i < 2 * mr_kspace_voxels(ks); i++) {
                d += ((double)img[i] - ours[i]) * ((double)img[i] - ours[i]);
                b += (double)ours[i] * ours[i];
            }
            printf("relative_l2_vs_ours %.3g\n", b > 0 ? sqrt(d / b) : NAN);
        }
        free(ours);
    }
    free(img);
    mr_kspace_free(ks);
    return rc;
}
