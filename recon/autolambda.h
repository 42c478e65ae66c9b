/* The regularisation weight lambda of CG, (E^H E + lambda R^H R) x = E^H d (docs/RECON.md, "Choosing
 * lambda", gives the derivation and the measurements behind the constants):
 *
 *   --lambda L       lambda = L (absolute)
 *   --lambda-rel R   lambda = R diag, diag = <delta, E^H E delta> at the centre voxel (the scale of the
 *                    normal operator: ~ M/N^2 for one coil and the Dirac basis; with SENSE the
 *                    diagonal of E^H E = sum_c S_c^H F^H F S_c)
 *   neither          automatic, from the scan's noise level sigma (per real/imaginary part of a sample;
 *                    mr_kspace.noise_sigma: the phantom's, or the ISMRMRD noise scans'):
 *                      sigma > 0:      lambda = K sigma^2 / s^e: for a quadratic prior (e = 2) the
 *                                      maximum-a-posteriori weight of a Gaussian prior on R x whose
 *                                      spread is proportional to the image scale s; for an l1-type
 *                                      prior (e = 1) that of a Laplace prior of scale proportional
 *                                      to s; K per prior (recon/priors.h), measured;
 *                      sigma = 0:      lambda = 0 (noiseless data);
 *                      sigma unknown:  lambda = 0, with a note that the noise level is unknown.
 *                    s is the 99th percentile of |x_1|, x_1 = alpha E^H d the first CG iterate
 *                    (alpha = ||E^H d||^2 / <E^H d, E^H E E^H d>), so lambda does not change when the
 *                    data are scaled.
 * A warning is logged when the scan states noise (sigma > 0) but lambda = 0 was asked for. */
#ifndef MR_AUTOLAMBDA_H
#define MR_AUTOLAMBDA_H

/* the percentile of |x_1| taken as the image scale s */
#define MR_AUTOLAMBDA_SCALE_PERCENTILE 99.0

typedef struct {
    double lambda;     /* >= 0: the absolute weight asked for (--lambda); < 0: not given */
    double lambda_rel; /* >= 0: relative to diag (--lambda-rel); < 0: not given */
    double k;          /* the automatic rule's constant for the prior (recon/priors.h) */
    int exponent;      /* lambda = k sigma^2 / s^exponent: 2 for quadratic priors, 1 for the l1-type ones */
    double sigma;      /* the scan's noise sigma per real/imaginary part of a sample; < 0 unknown, 0 none */
    double diag;       /* <delta, E^H E delta> at the centre voxel, > 0 */
    double scale;      /* s (see above); used only by the automatic rule with sigma > 0 */
    double data_power; /* mean |d|^2 per sample (all coils), for the SNR in messages */
} mr_lambda_inputs;

typedef struct {
    double lambda;  /* the weight to use, >= 0 */
    double rel;     /* lambda / diag */
    char from[192]; /* how it was chosen, for the report: "--lambda", "automatic: ..." */
} mr_lambda_choice;

/* Whether the choice needs the image scale s (the automatic rule on a scan with sigma > 0). */
int mr_lambda_needs_scale(double lambda, double lambda_rel, double sigma);

/* Choose lambda; logs one info line for the automatic choice and the warning described above. */
void mr_lambda_choose(const mr_lambda_inputs *in, mr_lambda_choice *out);

#endif
