#!/usr/bin/env bash
# Images out to every tool (issue 23): recon --format, convert of images, the orientation marker in
# every output, DICOM validated, options that cannot apply refused, BART names (k + t).
#   - the phantom with the marker, recon --method all --format all: every file there; the same images
#     through convert (h5 -> nii (complex) -> BART -> h5) bit-identical (tests/tool_imgcmp);
#   - DICOM (when this build has DCMTK): dciodvfy (dicom3tools) reports no error, dcmdump reads every
#     file; pydicom reads them, the pixels x RescaleSlope are the magnitudes, the marker is in the
#     top-left corner; nibabel reads the NIfTI with orientation codes L, P, S (no scanner geometry) and
#     the marker at small i, j; `bart toimg` of the BART image puts the marker top-left. Each of
#     these parts SKIPs with a message when its tool is missing (pip install pydicom nibabel numpy;
#     apt-get install dicom3tools dcmtk bart);
#   - refused options (exit 2, naming the option): --matrix/--fov/--traj on non-BART input, --matrix
#     NX,NY,NZ on a 2D BART scan, CG options with gridding, gridding options with CG, --format jpeg,
#     --nifti complex without nifti, k-space options with an image, image formats for k-space;
#   - BART's own names: bart traj + bart phantom -k -t t k, then info/recon/convert k --traj t.
#   bash tests/cli_export.sh <path-to-mrirecon> <scratch-dir>
set -u
bin=$1
dir=$2
. "$(dirname "$0")/expect_lib.sh" # empties $dir, fail=0, expect(), check()
imgcmp=$(dirname "$bin")/tool_imgcmp
py=$(command -v python3 || true)

"$bin" phantom -o "$dir/m.h5" --matrix 48 --marker -q >/dev/null || { echo "FAIL: phantom --marker"; exit 1; }
dicom=1
"$bin" recon "$dir/m.h5" -o "$dir/probe" --format dicom -q >/dev/null 2>"$dir/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "without DICOM support" "$dir/err"; then
  echo "SKIP (part): this build has no DICOM writer (libdcmtk-dev missing at build time)"
  dicom=0
fi
formats=h5,png,nifti,cfl,mrd
[ $dicom = 1 ] && formats=all
expect 0 "recon --method all --format $formats" -- "$bin" recon "$dir/m.h5" -o "$dir/r" --method all --format "$formats" -q
for m in cg gridding-kb gridding-bilinear; do
  for ext in h5 png nii hdr cfl mrd; do
    check "image_$m.$ext written" test -s "$dir/r/image_$m.$ext"
  done
  [ $dicom = 1 ] && check "image_${m}_0001.dcm written" test -s "$dir/r/image_${m}_0001.dcm"
done
check "compare.png and report written" test -s "$dir/r/compare.png" -a -s "$dir/r/report.json"
expect 0 "recon default formats" -- "$bin" recon "$dir/m.h5" -o "$dir/d" -q
check "default: h5, png, nii only" test -s "$dir/d/image_iterative.nii" -a ! -e "$dir/d/image_iterative.cfl" -a ! -e "$dir/d/image_iterative.mrd"
expect 0 "recon --force over --format all" -- "$bin" recon "$dir/m.h5" -o "$dir/r" --method all --format h5 --force -q
check "--force removed the earlier run's .cfl/.mrd/.dcm" test ! -e "$dir/r/image_cg.cfl" -a ! -e "$dir/r/image_cg.mrd" -a ! -e "$dir/r/image_cg_0001.dcm"
expect 0 "recon again --format all" -- "$bin" recon "$dir/m.h5" -o "$dir/r" --method all --format "$formats" --force -q

# convert: images through every readable format and back, bit for bit
expect 0 "convert h5 -> nii (complex)" -- "$bin" convert "$dir/r/image_cg.h5" "$dir/c.nii" --nifti complex
expect 0 "convert nii -> BART" -- "$bin" convert "$dir/c.nii" "$dir/cb"
expect 0 "convert BART -> h5" -- "$bin" convert "$dir/cb.hdr" "$dir/back.h5"
check "h5 -> nii -> BART -> h5 bit-identical" "$imgcmp" "$dir/back.h5" "$dir/r/image_cg.h5"
expect 0 "convert recon's BART image -> h5" -- "$bin" convert "$dir/r/image_cg" "$dir/back2.h5"
check "recon's image_cg.hdr/.cfl = image_cg.h5" "$imgcmp" "$dir/back2.h5" "$dir/r/image_cg.h5"
expect 0 "convert h5 -> mrd" -- "$bin" convert "$dir/r/image_cg.h5" "$dir/c.mrd"
expect 0 "convert h5 -> png" -- "$bin" convert "$dir/r/image_cg.h5" "$dir/c.png"
if [ $dicom = 1 ]; then
  expect 0 "convert h5 -> DICOM folder" -- "$bin" convert "$dir/r/image_cg.h5" "$dir/dcm/"
  check "DICOM folder holds IM0001.dcm" test -s "$dir/dcm/IM0001.dcm"
fi

expect 0 "info on an image" -- "$bin" info "$dir/r/image_cg.nii"
grep -q "image 48x48x1, voxel 5 x 5" "$dir/out" && echo "ok: info describes the image" || { echo "FAIL: info: $(cat "$dir/out")"; fail=1; }
expect 2 "info image --volume 0" -- "$bin" info "$dir/r/image_cg.h5" --volume 0

# DICOM validated
if [ $dicom = 1 ]; then
  if command -v dciodvfy >/dev/null 2>&1; then
    for f in "$dir"/r/image_*_0001.dcm "$dir/dcm/IM0001.dcm"; do
      dciodvfy "$f" >"$dir/vfy" 2>&1
      if grep -q "^Error" "$dir/vfy"; then
        echo "FAIL: dciodvfy $f:"; grep "^Error" "$dir/vfy" | sed 's/^/  /'; fail=1
      else
        echo "ok: dciodvfy $(basename "$f"): no errors ($(grep -c '^Warning' "$dir/vfy") warnings: the rescale attributes)"
      fi
    done
  else
    echo "SKIP (part): dciodvfy not installed (apt-get install dicom3tools)"
  fi
  if command -v dcmdump >/dev/null 2>&1; then
    check "dcmdump reads image_cg_0001.dcm" dcmdump -q "$dir/r/image_cg_0001.dcm" >/dev/null
    dcmdump "$dir/r/image_cg_0001.dcm" >"$dir/dump" 2>&1
    check "MR Image Storage, MONOCHROME2, 48 rows" grep -q -e "MRImageStorage" "$dir/dump"
    grep -q "(0028,0010) US 48" "$dir/dump" && echo "ok: Rows 48" || { echo "FAIL: Rows"; fail=1; }
  else
    echo "SKIP (part): dcmdump not installed (apt-get install dcmtk)"
  fi
fi

# Python readers: the marker in the top-left corner of every picture, values and placement
if command -v bart >/dev/null 2>&1; then
  bart toimg "$dir/r/image_cg" "$dir/bart_toimg.png" >/dev/null 2>&1 || { echo "FAIL: bart toimg of our BART image"; fail=1; }
else
  echo "SKIP (part): bart not installed: bart toimg not tried"
fi
if [ -n "$py" ] && "$py" -c "import numpy" 2>/dev/null; then
  "$py" - "$dir" "$dicom" <<'PY' || fail=1
import glob, importlib, os, sys
import numpy as np
d, dicom = sys.argv[1], sys.argv[2] == "1"
bad = 0

def corner(a):
    """The quadrant of the marker: the largest value of the image minus its left-right mirror (the head
    is symmetric, the marker is not)."""
    a = np.abs(np.asarray(a, dtype=float))
    m = np.clip(a - a[:, ::-1], 0, None)
    r, c = np.unravel_index(np.argmax(m), m.shape)
    return ("top" if r < a.shape[0] / 2 else "bottom") + "-" + ("left" if c < a.shape[1] / 2 else "right")

def check(label, ok, detail=""):
    global bad
    print(("ok: " if ok else "FAIL: ") + label + (": " + detail if detail else ""))
    bad |= not ok

def cfl(name):
    dims = [int(x) for x in open(name + ".hdr").read().split("\n")[1].split()]
    a = np.fromfile(name + ".cfl", dtype=np.complex64).reshape(dims, order="F")
    return a.reshape(dims[:3] + [1] * (3 - len(dims[:3])), order="F")

def have(mod):
    try:
        return importlib.import_module(mod)
    except ImportError:
        print("SKIP (part): python module %s not installed (pip install %s)" % (mod, mod))
        return None

img = cfl(os.path.join(d, "r", "image_cg"))[:, :, 0]  # [x, y]
mag = np.abs(img).T                                   # rows y, columns x: the picture
check("BART image [x, y]: marker", corner(mag) == "top-left", corner(mag))
pyd = have("pydicom") if dicom else None
if pyd:
    ds = pyd.dcmread(os.path.join(d, "r", "image_cg_0001.dcm"))
    px = ds.pixel_array.astype(float) * float(ds.RescaleSlope) + float(ds.RescaleIntercept)
    check("pydicom: Rows x Columns = Ny x Nx", px.shape == mag.shape, str(px.shape))
    err = np.abs(px - mag).max()
    check("pydicom: pixels x RescaleSlope = |image| within half a step", err <= 0.51 * float(ds.RescaleSlope), "%.3g" % err)
    check("pydicom: marker", corner(px) == "top-left", corner(px))
    check("pydicom: ImageOrientationPatient = x, y directions", [float(v) for v in ds.ImageOrientationPatient] == [1, 0, 0, 0, 1, 0])
    check("pydicom: ImagePositionPatient = voxel (0, 0) at -N/2 voxels", abs(float(ds.ImagePositionPatient[0]) + 120) < 1e-3
          and abs(float(ds.ImagePositionPatient[1]) + 120) < 1e-3, str(ds.ImagePositionPatient))
    uids = {pyd.dcmread(f).SeriesInstanceUID for f in glob.glob(os.path.join(d, "r", "image_*_0001.dcm"))}
    studies = {pyd.dcmread(f).StudyInstanceUID for f in glob.glob(os.path.join(d, "r", "image_*_0001.dcm"))}
    check("pydicom: one series per method, one study", len(uids) == 4 and len(studies) == 1, "%d series, %d studies" % (len(uids), len(studies)))
nib = have("nibabel")
if nib:
    n = nib.load(os.path.join(d, "r", "image_cg.nii"))
    data = np.asarray(n.dataobj)[:, :, 0]
    check("nibabel: voxels = |image|", np.allclose(data, np.abs(img), rtol=1e-6, atol=1e-7))
    check("nibabel: orientation codes", nib.aff2axcodes(n.affine) == ("L", "P", "S"), str(nib.aff2axcodes(n.affine)))
    check("nibabel: marker (as the PNG: j down, i across)", corner(data.T) == "top-left", corner(data.T))
png_mod = have("PIL.Image")
if png_mod:
    p = np.asarray(png_mod.open(os.path.join(d, "r", "image_cg.png")).convert("L"), dtype=float)
    check("image_cg.png: marker", corner(p) == "top-left", corner(p))
    t = os.path.join(d, "bart_toimg.png")
    if os.path.exists(t):
        b = np.asarray(png_mod.open(t).convert("L"), dtype=float)
        # bart toimg draws dim 0 (x) down and dim 1 (y) across: our picture transposed (docs/FORMAT.md)
        check("bart toimg: marker", corner(b) == "top-left", corner(b))
        check("bart toimg = our picture transposed", b.shape == p.T.shape, str(b.shape))
sys.exit(1 if bad else 0)
PY
else
  echo "SKIP (part): python3 with numpy not available (pip install numpy pydicom nibabel pillow)"
fi

# options that cannot apply: refused, naming the option
"$bin" phantom -o "$dir/sp.h5" --matrix 32 --traj spiral -q >/dev/null
expect 2 "recon spiral --matrix 128,128,4" -- "$bin" recon "$dir/sp.h5" -o "$dir/x" --matrix 128,128,4
grep -q -- "--matrix applies to BART input only" "$dir/err" && echo "ok: names --matrix" || { echo "FAIL: --matrix message"; fail=1; }
expect 2 "recon spiral --fov 300" -- "$bin" recon "$dir/sp.h5" -o "$dir/x" --fov 300
expect 2 "recon spiral --space recon" -- "$bin" recon "$dir/sp.h5" -o "$dir/x" --space recon
expect 2 "recon --method cg --kernel-width 6" -- "$bin" recon "$dir/sp.h5" -o "$dir/x" --kernel-width 6
grep -q -- "--kernel-width applies to Kaiser-Bessel gridding" "$dir/err" && echo "ok: names --kernel-width" || { echo "FAIL: message"; fail=1; }
expect 2 "recon --method gridding-kb --lambda 1" -- "$bin" recon "$dir/sp.h5" -o "$dir/x" --method gridding-kb --lambda 1
expect 2 "recon --format jpeg" -- "$bin" recon "$dir/sp.h5" -o "$dir/x" --format jpeg
expect 2 "recon --nifti complex --format h5" -- "$bin" recon "$dir/sp.h5" -o "$dir/x" --nifti complex --format h5
expect 2 "batch --method cg --dcf pipe" -- "$bin" batch "$dir/sp.h5" -o "$dir/xb" --dcf pipe
expect 2 "phantom --traj spiral --spokes 10" -- "$bin" phantom -o "$dir/x.h5" --traj spiral --spokes 10
expect 2 "convert image --volume 0" -- "$bin" convert "$dir/r/image_cg.h5" "$dir/x.nii" --volume 0
expect 2 "convert k-space to .nii" -- "$bin" convert "$dir/sp.h5" "$dir/x.nii"
expect 2 "convert k-space --nifti complex" -- "$bin" convert "$dir/sp.h5" "$dir/x.h5" --nifti complex
check "nothing written by the refused runs" test ! -e "$dir/x" -a ! -e "$dir/x.nii" -a ! -e "$dir/x.h5" -a ! -e "$dir/xb"

# BART's own names: k-space k with trajectory t
if command -v bart >/dev/null 2>&1; then
  (cd "$dir" && bart traj -x 64 -y 51 -r t >/dev/null 2>&1 && bart phantom -k -t t k >/dev/null 2>&1)
  expect 1 "info k.hdr without --traj" -- "$bin" info "$dir/k.hdr"
  grep -q -- "--traj" "$dir/err" && echo "ok: the message names --traj" || { echo "FAIL: message"; fail=1; }
  expect 0 "info k.hdr --traj t" -- "$bin" info "$dir/k.hdr" --traj "$dir/t"
  expect 0 "recon k --traj t" -- "$bin" recon "$dir/k" --traj "$dir/t" -o "$dir/bk" -q
  expect 0 "convert k --traj t" -- "$bin" convert "$dir/k" "$dir/k.h5" --traj "$dir/t"
  expect 2 "recon k --traj t --matrix 64,64,4 (2D trajectory)" -- "$bin" recon "$dir/k" --traj "$dir/t" -o "$dir/x" --matrix 64,64,4
  grep -q "has no kz" "$dir/err" && echo "ok: says the trajectory has no kz" || { echo "FAIL: message"; fail=1; }
  expect 2 "recon mrirecon scan --traj t" -- "$bin" recon "$dir/sp.h5" --traj "$dir/t" -o "$dir/x"
else
  echo "SKIP (part): bart not installed: BART names (k + t) not tried"
fi

# a NIfTI made by nibabel (int16 with scl_slope, an oblique affine) through convert and back
if [ -n "$py" ] && "$py" -c "import numpy, nibabel" 2>/dev/null; then
  "$py" - "$dir" "$bin" <<'PY' || fail=1
import os, subprocess, sys
import numpy as np, nibabel as nib
d, b = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(1)
data = rng.integers(0, 1000, size=(12, 10, 6)).astype(np.int16)
c, s = np.cos(0.4), np.sin(0.4)
aff = np.array([[1.5 * c, -2 * s, 0, 10], [1.5 * s, 2 * c, 0, -20], [0, 0, 3, 7], [0, 0, 0, 1]])
img = nib.Nifti1Image(data, aff)
img.header.set_slope_inter(0.5, 2.0)
img.set_qform(aff, code=1); img.set_sform(aff, code=1)
src, mid, back = (os.path.join(d, n) for n in ("nb.nii", "nb.h5", "nb_back.nii"))
nib.save(img, src)
for a, o in ((src, mid), (mid, back)):
    r = subprocess.run([b, "convert", a, o], capture_output=True, text=True)
    if r.returncode:
        print("FAIL: convert %s %s: %s" % (a, o, r.stderr)); sys.exit(1)
n = nib.load(back)
want = data * 0.5 + 2.0
ok_data = np.allclose(np.asarray(n.dataobj), want, rtol=1e-6)
ok_aff = np.allclose(n.affine, aff, atol=1e-4)
print(("ok" if ok_data else "FAIL") + ": nibabel int16 x scl_slope + scl_inter -> h5 -> nii: the values")
print(("ok" if ok_aff else "FAIL") + ": the oblique affine survives (max diff %.2g mm)" % np.abs(n.affine - aff).max())
sys.exit(0 if ok_data and ok_aff else 1)
PY
fi

expect 2 "batch (mrirecon scans only) --matrix 64,64" -- "$bin" batch "$dir/sp.h5" "$dir/m.h5" -o "$dir/xb" --matrix 64,64
grep -q -- "--matrix applies to BART input only" "$dir/err" && echo "ok: names --matrix" || { echo "FAIL: message"; fail=1; }

# the marker through ISMRMRD raw data (written by libismrmrd): the same corner as from our file
tools=$(dirname "$bin")
if "$tools/tool_ismrmrd_write" "$dir/m.h5" "$dir/m.mrd" >/dev/null 2>&1; then
  expect 0 "recon the ISMRMRD scan" -- "$bin" recon "$dir/m.mrd" -o "$dir/ri" --format "$formats" -q
  if [ -n "$py" ] && "$py" -c "import numpy, PIL" 2>/dev/null; then
    "$py" - "$dir" <<'PY' || fail=1
import os, sys
import numpy as np
from PIL import Image
d = sys.argv[1]
def corner(a):
    a = np.abs(np.asarray(a, dtype=float)); m = np.clip(a - a[:, ::-1], 0, None)
    r, c = np.unravel_index(np.argmax(m), m.shape)
    return ("top" if r < a.shape[0] / 2 else "bottom") + "-" + ("left" if c < a.shape[1] / 2 else "right")
a = corner(Image.open(os.path.join(d, "ri", "image_iterative.png")).convert("L"))
b = corner(Image.open(os.path.join(d, "r", "image_cg.png")).convert("L"))
print(("ok" if a == b == "top-left" else "FAIL") + ": the marker from ISMRMRD raw data: %s (from our file: %s)" % (a, b))
sys.exit(0 if a == b == "top-left" else 1)
PY
  else
    echo "SKIP (part): python3 with numpy and pillow not available: the ISMRMRD marker corner not checked"
  fi
else
  echo "SKIP (part): tool_ismrmrd_write built without libismrmrd (apt-get install libismrmrd-dev)"
fi

# the Q cache command on a cache of its own
expect 0 "recon --q-cache DIR" -- "$bin" recon "$dir/sp.h5" -o "$dir/qrun" --q-cache "$dir/qc" -q
expect 0 "cache list" -- "$bin" cache list --dir "$dir/qc"
grep -q "1 entry" "$dir/out" && echo "ok: cache list shows the entry" || { echo "FAIL: cache list: $(cat "$dir/out")"; fail=1; }
expect 0 "cache size" -- "$bin" cache size --dir "$dir/qc"
[ "$(cat "$dir/out")" -gt 0 ] 2>/dev/null && echo "ok: cache size > 0" || { echo "FAIL: cache size: $(cat "$dir/out")"; fail=1; }
expect 0 "cache clear" -- "$bin" cache clear --dir "$dir/qc"
expect 0 "cache size after clear" -- "$bin" cache size --dir "$dir/qc"
[ "$(cat "$dir/out")" = 0 ] && echo "ok: empty after clear" || { echo "FAIL: size after clear: $(cat "$dir/out")"; fail=1; }
expect 2 "cache bogus" -- "$bin" cache bogus

# --slice: the planes of a 3D picture; outside the image is an error naming the axis
"$bin" phantom -o "$dir/m3.h5" --dim 3 --matrix 24 --marker --traj kooshball --spokes 400 --readout 24 -q >/dev/null
expect 0 "recon 3D --slice 4,3,6" -- "$bin" recon "$dir/m3.h5" -o "$dir/r3" --method gridding-kb --slice 4,3,6 -q
check "3D picture written" test -s "$dir/r3/image_gridding-kb.png"
expect 1 "--slice on a 2D scan" -- "$bin" recon "$dir/sp.h5" -o "$dir/x" --slice 1,2,0
grep -q "this image is 2D" "$dir/err" && echo "ok: says why" || { echo "FAIL: message"; fail=1; }
expect 2 "convert mrirecon -> mrirecon --bart-scale" -- "$bin" convert "$dir/sp.h5" "$dir/x.h5" --bart-scale
expect 2 "--slice 1,2" -- "$bin" recon "$dir/m3.h5" -o "$dir/x" --slice 1,2
expect 1 "--slice outside the image" -- "$bin" recon "$dir/m3.h5" -o "$dir/x" --method gridding-kb --slice 4,3,30
grep -q "slice z = 30" "$dir/err" && echo "ok: names the axis" || { echo "FAIL: message"; fail=1; }

exit $fail
