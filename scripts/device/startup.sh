#!/usr/bin/env bash
# Where a GPU process's fixed time goes: the driver's start, the context, the teardown at exit. A probe
# program (built here with nvcc) times cudaFree(0) (driver + context), a 2 GB allocation and, optionally, a
# 256^3 cuFFT plan and transform, and prints the time of its last line; the parent measures the exit. Each
# variant 5 times: exit from main, cudaDeviceReset then exit, _exit; then the same with a second process
# holding a CUDA context open (what nvidia-persistenced or any other GPU client gives: the driver stays
# initialised). Then `recon --device gpu --method cg` on the book problem 3 times without and 3 times with
# the holder (Q computed; and from the cache), each with the context released during the outputs (the
# default) and at the process's end (MR_GPU_RELEASE=exit). Persistence mode as nvidia-smi reports it.
# Usage: scripts/device.sh startup; BUILD=/tmp/b
set -uo pipefail
cd "$(dirname "$0")/../.."
L=/tmp/startup-logs
. scripts/device/lib.sh
build_tree
bin="$B/mrirecon"
. <(sed -n '/^scan() {/,/^}/p' scripts/device.sh)
{
  nvidia-smi -q | grep -i -m2 -A0 "persistence" || true
  for t in strace perf nsys ltrace; do printf '%s: %s\n' "$t" "$(command -v $t || echo absent)"; done
} >>"$S"
cat >/tmp/probe.cu <<'PROBE'
#include <cuda_runtime.h>
#include <cufft.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "return";
    const int fft = argc > 2 && !strcmp(argv[2], "fft");
    double t0 = now();
    cudaFree(0);
    double t1 = now();
    void *p = NULL;
    cudaMalloc(&p, (size_t)2 << 30);
    cudaMemset(p, 0, (size_t)2 << 30);
    cudaDeviceSynchronize();
    double t2 = now(), t3 = t2;
    if (fft) {
        cufftHandle h;
        cufftPlan3d(&h, 256, 256, 256, CUFFT_C2C);
        cufftExecC2C(h, (cufftComplex *)p, (cufftComplex *)p, CUFFT_FORWARD);
        cudaDeviceSynchronize();
        t3 = now();
    }
    double t4 = t3;
    if (!strcmp(how, "reset")) {
        cudaDeviceReset();
        t4 = now();
    }
    printf("ctx %.4f alloc %.4f fft %.4f reset %.4f\n", t1 - t0, t2 - t1, t3 - t2, t4 - t3);
    fflush(stdout);
    if (!strcmp(how, "_exit"))
        _exit(0);
    return 0;
}
PROBE
nvcc -O2 -arch=sm_90 /tmp/probe.cu -o /tmp/probe -lcufft >"$L/probe_build.log" 2>&1 || { echo "probe build failed" >>"$S"; cat "$L/probe_build.log" >>"$S"; }
scan book
python3 - "$bin" >>"$S" 2>&1 <<'PY'
import json, os, re, statistics, subprocess, sys, time
bin_ = sys.argv[1]
def probe(how, fft):
    rows = []
    for _ in range(5):
        t0 = time.monotonic()
        p = subprocess.Popen(["/tmp/probe", how, fft], stdout=subprocess.PIPE, text=True)
        line = p.stdout.readline(); t_line = time.monotonic() - t0
        p.wait(); wall = time.monotonic() - t0
        v = line.split()
        rows.append((wall, t_line, wall - t_line, float(v[1]), float(v[7])))
    med = [statistics.median(c) for c in zip(*rows)]
    print("  probe %-6s %-4s: wall %.3f, last line at %.3f, exit %.3f (min %.3f max %.3f), ctx %.3f, reset %.3f"
          % (how, fft, med[0], med[1], med[2], min(r[2] for r in rows), max(r[2] for r in rows), med[3], med[4]))
def recon(label, cache):
    out = "/tmp/su_" + cache
    args = [bin_, "recon", "/tmp/book.h5", "-o", out, "--device", "gpu", "--method", "cg", "--force", "-q"]
    args += ["--q-cache", "off"] if cache == "off" else []
    for i in range(3):
        for release in ("early", "exit"): # the context's teardown during the outputs, or at the process's end
            env = dict(os.environ, MR_GPU_RELEASE=release)
            t0 = time.monotonic()
            rc = subprocess.run(args, stdout=subprocess.DEVNULL, env=env).returncode
            wall = time.monotonic() - t0
            t = json.load(open(out + "/report.json"))["timings_s"]
            print("  recon %s, Q cache %s, release %s, run %d: exit %d, wall %.3f, total %.3f, after total %.3f "
                  "(device_init %.3f, read %.3f, solve %.3f, write %.3f)" % (label, cache, release, i + 1, rc, wall,
                  t["total"], wall - t["total"], t["device_init"], t["read"], t["solve"], t["write"]))
def verbose():
    """one run with -v: its debug lines on the time around the report's total"""
    p = subprocess.run([bin_, "recon", "/tmp/book.h5", "-o", "/tmp/su_v", "--device", "gpu", "--method", "cg", "--force",
                        "-v", "--q-cache", "off"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr.splitlines():
        if re.search(r"after the report|waited .* release|device resolved|memory released", line):
            print("  -v:", line)
env = dict(os.environ, MRIRECON_CACHE_DIR="/tmp/su-cache")
os.environ.update(env)
for holder in (False, True):
    h = None
    if holder:
        h = subprocess.Popen(["python3", "-c", "import cupy, sys, time; cupy.zeros(1); print('up', flush=True); time.sleep(600)"],
                             stdout=subprocess.PIPE, text=True)
        print("holder:", h.stdout.readline().strip())
    tag = "with a holder" if holder else "alone"
    print(tag)
    for how in ("return", "reset", "_exit"):
        for fft in ("none", "fft"):
            probe(how, fft)
    recon(tag, "off")
    recon(tag, "default")
    verbose()
    if h:
        h.kill(); h.wait()
PY
