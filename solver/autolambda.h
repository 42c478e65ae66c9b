/* The regularisation weight lambda of CG, (E^H E + lambda R^H R) x = E^H d (docs/RECON.md, "Choosing
 * lambda", gives the derivation and the measurements behind the constants):
 *
 *   --lambda L       lambda = L (absolute)
 *   --lambda-rel R   lambda = R diag, diag = <delta, E^H E delta> at the centre voxel (the scale of the
 *                    normal operator: ~ M/N^2 for one coil and the Dirac basis; with SENSE the
 *                    diagonal of E^H E = sum_c S_c^H F^H F S_c)
 *   neither          automatic, from the scan's noise level sigma (per real/imaginary part of a sample;
 *                    mr_kspace.noise_sigma: the phantom's, or the ISMRMRD noise scans'):
 *                      sigma > 0:      a quadratic prior (rule MR_LAMBDA_GAUSSIAN): lambda = K sigma^2 /
 *                                      s^2, the maximum-a-posteriori weight of a Gaussian prior on R x
 *                                      whose spread is proportional to the image scale s;
 *                                      an l1-type prior (rule MR_LAMBDA_NOISE): lambda = K sigma sqrt(d),
 *                                      d = diag(E^H E) at the centre: E^H E ~ d I turns the problem into
 *                                      denoising the least-squares image, whose noise per voxel is
 *                                      sigma / sqrt(d), with the weight K sigma / sqrt(d) (times d);
 *                                      measured to track the best lambda of a sweep within about 25 %
 *                                      on radial, golden-angle, spiral and 8-coil scans from 15 to 30
 *                                      dB, where the maximum-a-posteriori sigma^2 / s missed by up to
 *                                      x10 (docs/RECON.md); K per prior (recon/pipeline/priors.h);
 *                      sigma = 0:      lambda = 0 (noiseless data);
 *                      sigma unknown:  lambda = 0, with a note that the noise level is unknown.
 *                    s (quadratic priors) is the 99th percentile of |x_1|, x_1 = alpha E^H d the first CG iterate
 *                    (alpha = ||E^H d||^2 / <E^H d, E^H E E^H d>), so lambda does not change when the
 *                    data are scaled.
 * A warning is logged when the scan states noise (sigma > 0) but lambda = 0 was asked for. */
#ifndef MR_AUTOLAMBDA_H
#define MR_AUTOLAMBDA_H

/* the percentile of |x_1| taken as the image scale s */
#define MR_AUTOLAMBDA_SCALE_PERCENTILE 99.0

/* The automatic rule of a prior (above). */
typedef enum { MR_LAMBDA_GAUSSIAN = 0, MR_LAMBDA_NOISE = 1 } mr_lambda_rule;

typedef struct {
    double lambda;     /* >= 0: the absolute weight asked for (--lambda); < 0: not given */
    double lambda_rel; /* >= 0: relative to diag (--lambda-rel); < 0: not given */
    double k;          /* the automatic rule's constant for the prior (recon/pipeline/priors.h) */
    mr_lambda_rule rule;
    double sigma;      /* the scan's noise sigma per real/imaginary part of a sample; < 0 unknown, 0 none */
    double diag;       /* <delta, E^H E delta> at the centre voxel, > 0 */
    double scale;      /* s (see above); used only by the Gaussian rule with sigma > 0 */
    double data_power; /* mean |d|^2 per sample (all coils), for the SNR in messages */
} mr_lambda_inputs;

typedef struct {
    double lambda;  /* the weight to use, >= 0 */
    double rel;     /* lambda / diag */
    char from[192]; /* how it was chosen, for the report: "--lambda", "automatic: ..." */
} mr_lambda_choice;

/* Whether the choice needs the image scale s (the Gaussian rule on a scan with sigma > 0). */
int mr_lambda_needs_scale(double lambda, double lambda_rel, double sigma, mr_lambda_rule rule);

/* Choose lambda; logs one info line for the automatic choice and the warning described above. */
void mr_lambda_choose(const mr_lambda_inputs *in, mr_lambda_choice *out);

#endif
