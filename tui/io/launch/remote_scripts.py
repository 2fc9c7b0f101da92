"""The POSIX ``sh`` scripts the launcher runs on a host, and the argv that runs each one.

Every script is a constant: data reaches it only as positional parameters (``sh -c SCRIPT NAME
ARG...``), so no value from a profile is ever parsed as shell text. The scripts need ``sh``,
coreutils, ``awk`` and Linux ``/proc``; ``ss`` and ``nvidia-smi`` are used when present.

Output is one fact per line, ``<key> <value>``, read by :mod:`tui.engine.launch.launch_report`:

``boot ID``                      the host's boot id (process start times are per boot)
``run RUN_ID``                   the run a probe looked at
``record JSON``                  the run record, on one line
``identity PID START BOOT``      the process group the run's wrapper recorded when it started
``exit STATUS UNIX_TIME``        how the run's command ended, recorded by the wrapper
``member PID START STATE NAME``  one process of that group (``START`` in clock ticks since boot)
``listen PID NAME``              a process listening on the port (``-`` when it cannot be seen)
``ss LINE`` / ``gpu LINE`` / ``app LINE``   raw ``ss`` and ``nvidia-smi`` rows
``error TEXT``                   why a script gave up
"""

from __future__ import annotations

from collections.abc import Sequence

_FUNCTIONS = r"""
boot_id() { cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -; }
members() {
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v g="$1" '
    { open = index($0, " (")
      if (!open || !match($0, /\) [^)]*$/)) next
      n = split(substr($0, RSTART + 2), f, " ")
      if (n >= 20 && f[3] == g)
        print "member", $1, f[20], f[1], substr($0, open + 2, RSTART - open - 2) }'
}
probe_run() {
  state=$1 run=$2
  if [ -z "$run" ]; then
    [ -L "$state/$3-current.json" ] || return 0
    run=$(readlink -- "$state/$3-current.json")
    run=${run##*/}
    run=${run%.json}
  fi
  printf 'run %s\n' "$run"
  # Processes first, exit status after: the wrapper writes the status before it exits, so a
  # group seen empty always has its status on disk by the time it is read.
  if [ -f "$state/$run.pid" ] && read -r pid start boot < "$state/$run.pid"; then
    printf 'identity %s %s %s\n' "$pid" "$start" "$boot"
    case $pid in ''|*[!0-9]*) ;; *) members "$pid" ;; esac
  fi
  if [ -f "$state/$run.exit" ]; then printf 'exit %s\n' "$(head -n 1 -- "$state/$run.exit")"; fi
  if [ -f "$state/$run.json" ]; then
    printf 'record %s\n' "$(head -c 65536 -- "$state/$run.json" | tr -d '\n')"
  fi
}
proc_listeners() {
  hex=$(printf '%04X' "$1")
  inodes=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v h="$hex" '
    $4 == "0A" { n = split($2, a, ":"); if (a[n] == h) print $10 }' | tr '\n' ' ')
  [ -n "$inodes" ] || return 0
  found=$(ls -l /proc/[0-9]*/fd/ 2>/dev/null | awk -v want="$inodes" '
    BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) left["socket:[" w[i] "]"] = 1 }
    /^\/proc\/[0-9]+\/fd\/?:$/ { split($0, p, "/"); pid = p[3]; next }
    ($NF in left) { print pid; delete left[$NF] }
    END { for (k in left) print "-" }')
  for pid in $found; do
    if [ "$pid" = - ]; then echo "listen - -"; continue; fi
    printf 'listen %s %s\n' "$pid" "$(cat "/proc/$pid/comm" 2>/dev/null)"
  done
}
listeners() {
  if command -v ss >/dev/null 2>&1 && out=$(ss -Hltnp "sport = :$1" 2>/dev/null); then
    echo "listen-source ss"
    printf '%s\n' "$out" | while IFS= read -r line; do
      [ -z "$line" ] || printf 'ss %s\n' "$line"
    done
  elif [ -r /proc/net/tcp ]; then
    echo "listen-source proc"
    proc_listeners "$1"
  else
    echo "listen-source none"
  fi
}
gpus() {
  # "$@": the nvidia-smi command, as its argument list.
  if ! command -v "$1" >/dev/null 2>&1; then echo "gpu-source none"; return 0; fi
  if ! out=$("$@" --query-gpu=index,uuid --format=csv,noheader 2>&1); then
    echo "gpu-source error"
    printf '%s\n' "$out" | head -n 3 | sed 's/^/gpu-error /'
    return 0
  fi
  echo "gpu-source nvidia-smi"
  printf '%s\n' "$out" | sed 's/^/gpu /'
  if out=$("$@" --query-compute-apps=pid,used_memory,gpu_uuid,process_name \
      --format=csv,noheader,nounits 2>&1); then
    printf '%s\n' "$out" | sed 's/^/app /'
  else
    printf '%s\n' "$out" | head -n 3 | sed 's/^/gpu-error /'
  fi
}
"""

HOME = r"""
printf 'home %s\n' "$HOME"
printf 'boot %s\n' "$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -)"
"""

PREFLIGHT = (
    _FUNCTIONS
    + r"""
port=$1 state=$2 stem=$3 model=$4 cwd=$5
shift 5
printf 'boot %s\n' "$(boot_id)"
if command -v setsid >/dev/null 2>&1; then echo "setsid yes"; else echo "setsid no"; fi
if [ -n "$port" ]; then listeners "$port"; fi
gpus "$@"
probe_run "$state" "" "$stem"
if [ -n "$model" ]; then
  if ( if [ -n "$cwd" ]; then cd -- "$cwd" 2>/dev/null || exit 1; fi; [ -e "$model" ] ); then
    echo "model yes"
  else
    echo "model no"
  fi
fi
"""
)

PROBE = (
    _FUNCTIONS
    + r"""
printf 'boot %s\n' "$(boot_id)"
probe_run "$1" "$2" "$3"
"""
)

STATE = (
    _FUNCTIONS
    + r"""
port=$1 pgid=$2
shift 2
printf 'boot %s\n' "$(boot_id)"
if [ -n "$port" ]; then listeners "$port"; fi
gpus "$@"
case $pgid in ''|*[!0-9]*) ;; *) members "$pgid" ;; esac
"""
)

SIGNAL = (
    _FUNCTIONS
    + r"""
pgid=$1 start=$2 boot=$3 sig=$4
now=$(boot_id)
printf 'boot %s\n' "$now"
if [ "$now" != "$boot" ]; then echo "refused the host has restarted since the run began"; exit 0; fi
if [ -r "/proc/$pgid/stat" ]; then
  leader=$(sed 's/.*) //' "/proc/$pgid/stat" | cut -d ' ' -f 20)
  if [ -n "$leader" ] && [ "$leader" != "$start" ]; then
    echo "refused process $pgid is no longer the run's process (its start time differs)"
    exit 0
  fi
fi
ours=$(members "$pgid" | awk -v s="$start" '$3 + 0 >= s + 0 && $4 != "Z"' | wc -l)
if [ "$ours" -eq 0 ]; then echo "gone"; exit 0; fi
if kill -s "$sig" -- "-$pgid" 2>/dev/null; then echo "signalled $sig"; else echo "gone"; fi
members "$pgid"
"""
)

LAUNCH = r"""
set -u
log=$1 latest=$2 state=$3 record=$4 current=$5 pidfile=$6 exitfile=$7 json=$8 cwd=$9
shift 9
venv=$1 conda=$2 wrapper=$3
shift 3
fail() { printf 'error %s\n' "$*"; exit 1; }
mkdir -p -- "${log%/*}" "$state" 2>/dev/null || fail "cannot create the folder $state"
if [ -e "$log" ] || [ -e "$record" ]; then echo "taken"; exit 17; fi
if ! (set -C; : > "$log") 2>/dev/null; then
  if [ -e "$log" ]; then echo "taken"; exit 17; fi
  fail "cannot create the log file $log"
fi
{ printf '%s\n' "$json" > "$record.tmp" && mv -f -- "$record.tmp" "$record"; } 2>/dev/null ||
  fail "cannot write the run record $record"
ln -sfn -- "${record##*/}" "$current" 2>/dev/null || fail "cannot update $current"
ln -sfn -- "${log##*/}" "$latest" 2>/dev/null || fail "cannot update $latest"
if [ -n "$cwd" ]; then
  cd -- "$cwd" 2>/dev/null || fail "cannot enter the working directory $cwd"
fi
if [ -n "$venv" ]; then
  [ -d "$venv/bin" ] || fail "no virtual environment at $venv"
  PATH=$venv/bin:$PATH VIRTUAL_ENV=$venv
  export PATH VIRTUAL_ENV
fi
if [ -n "$conda" ]; then
  exe=$(command -v conda 2>/dev/null) || exe=
  for candidate in "${CONDA_EXE:-}" "$HOME/miniforge3/bin/conda" "$HOME/miniconda3/bin/conda" \
      "$HOME/anaconda3/bin/conda" /opt/conda/bin/conda; do
    if [ -z "$exe" ] && [ -n "$candidate" ] && [ -x "$candidate" ]; then exe=$candidate; fi
  done
  [ -n "$exe" ] || fail "conda not found (put it on PATH or set CONDA_EXE)"
  case $conda in */*) which=-p ;; *) which=-n ;; esac
  set -- "$exe" run --no-capture-output "$which" "$conda" "$@"
fi
command -v setsid >/dev/null 2>&1 || fail "setsid (util-linux) is not installed on the host"
setsid -f nohup sh -c "$wrapper" bringup-run "$pidfile" "$exitfile" "$@" \
  < /dev/null >> "$log" 2>&1 || fail "setsid could not start the command"
tries=0
while [ ! -s "$pidfile" ]; do
  tries=$((tries + 1))
  [ "$tries" -le 200 ] || fail "the command did not start within 10 seconds"
  sleep 0.05
done
printf 'identity %s\n' "$(cat -- "$pidfile")"
"""

WRAPPER = r"""
pidfile=$1 exitfile=$2
shift 2
start=$(sed 's/.*) //' "/proc/$$/stat" | cut -d ' ' -f 20)
boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -)
printf '%s %s %s\n' "$$" "$start" "$boot" > "$pidfile.tmp" || exit 125
mv -f -- "$pidfile.tmp" "$pidfile" || exit 125
trap 'stopping=1' TERM INT
"$@"
status=$?
printf '%s %s\n' "$status" "$(date +%s)" > "$exitfile.tmp" && mv -f -- "$exitfile.tmp" "$exitfile"
exit "$status"
"""

WRITE = r"""
{ printf '%s\n' "$2" > "$1.tmp" && mv -f -- "$1.tmp" "$1"; } 2>/dev/null || {
  printf 'error cannot write %s\n' "$1"
  exit 1
}
"""


def script(name: str, body: str, args: Sequence[str | int | None]) -> list[str]:
    """The argv running ``body`` under ``sh -c`` with ``args`` as ``$1``, ``$2``, ...

    ``None`` becomes an empty string. Each argument stays one argument however it is quoted
    on the way (a transport that needs one command line joins this list with ``shlex.join``).
    """
    return ["sh", "-c", body, f"bringup-{name}", *("" if arg is None else str(arg) for arg in args)]
