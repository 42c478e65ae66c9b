# Helpers for tests/mpi_*.sh (sourced after batch_lib.sh, not a test itself): `mpi N CMD...` runs
# CMD as N ranks on this host. Exits 77 (skip) when mpirun is absent. What a CI container needs
# for Open MPI (docs/CLUSTER.md, "Running the tests"):
#   root:        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (or --allow-run-as-root)
#   2 cores:     --oversubscribe (more ranks than cores), --bind-to none (no rank pinned to one core)
#   no ssh:      OMPI_MCA_plm=isolated (Open MPI 4: one host, no remote launcher)
#   containers:  OMPI_MCA_btl_vader_single_copy_mechanism=none (no cross-process memory attach)
command -v mpirun > /dev/null 2>&1 || {
  echo "SKIP: mpirun not found (Debian: openmpi-bin)"
  exit 77
}
MPIRUN=(mpirun)
MPI_VERSION=$(mpirun --version 2>&1 | head -1)
if echo "$MPI_VERSION" | grep -q "Open MPI"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
  echo "$MPI_VERSION" | grep -q ' 4\.' && export OMPI_MCA_plm=isolated
  MPIRUN+=(--oversubscribe --bind-to none)
fi
# MR_SANITIZE builds: Open MPI leaves allocations of its plugins, unloaded at MPI_Finalize (so
# LeakSanitizer cannot even name them), in every rank. Leak checking is off under mpirun; ASan's
# memory errors and UBSan still abort. The one-process parts are leak-checked by test_mpi_comm.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
echo "using: ${MPIRUN[*]} ($MPI_VERSION)"

# mpi N CMD...: CMD as N ranks (10 minutes at most)
mpi() {
  local n=$1
  shift
  timeout 600 "${MPIRUN[@]}" -n "$n" "$@"
}

# mpi_children PID: the processes whose parent is PID (one grep over /proc/*/status)
mpi_children() {
  grep -l "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2> /dev/null | sed 's|^/proc/\([0-9]*\)/status$|\1|'
  return 0
}

# mpi_rank_pid PID RANK: the process of that rank among the descendants of PID (mpirun, or a
# wrapper of it such as timeout): the one nearest to PID (its scan children inherit the variable)
mpi_rank_pid() {
  local level=$1 next c p depth
  for depth in 1 2 3; do
    next=""
    for p in $level; do
      for c in $(mpi_children "$p"); do
        if tr '\0' '\n' < "/proc/$c/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then
          echo "$c"
          return 0
        fi
        next="$next $c"
      done
    done
    level=$next
  done
  return 0
}
