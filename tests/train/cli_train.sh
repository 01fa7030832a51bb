#!/usr/bin/env bash
# A short farnn train run on each built-in task: the loss must fall, and the
# checkpoint, loss CSV, plot and trace must be written and well formed.
# Usage: cli_train.sh <farnn binary>
set -euo pipefail
farnn=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check_fall() {  # mean loss of the last 10 steps below half of the first 10
  awk -F, 'NR>1 {l[NR-1]=$3; n=NR-1} END {
    for (i=1;i<=10;i++) {a+=l[i]; b+=l[n+1-i]}
    printf "first 10 steps %.5f, last 10 steps %.5f\n", a/10, b/10
    exit !(b < 0.5*a) }' "$1"
}
"$farnn" train --task sine --steps 30 --samples 64 --cell lstm --hidden 8 --layers 2 --batch 8 --epochs 8 \
  --lr 0.02 --device "model://?pes=4" --checkpoint "$tmp/ck.safetensors" --loss-csv "$tmp/loss.csv" \
  --plot "$tmp/loss.svg" --trace "$tmp/trace.json" --quiet
check_fall "$tmp/loss.csv"
grep -q "<polyline" "$tmp/loss.svg"
grep -q '"traceEvents"' "$tmp/trace.json"
grep -q '"device"' "$tmp/trace.json"
"$farnn" compare "$tmp/ck.safetensors" "$tmp/ck.safetensors" >/dev/null
# farnn grad takes the checkpoint as it is: the linear head is left out, and said so.
python3 - "$tmp" <<'PY'
import struct, sys
def npy(path, shape, vals):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ", ".join(map(str, shape))
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%df" % len(vals), *vals))
npy(sys.argv[1] + "/x.npy", (3, 2, 1), [0.1 * k for k in range(6)])
npy(sys.argv[1] + "/dy.npy", (3, 2, 8), [0.01 * (k % 7) for k in range(48)])
PY
msg=$("$farnn" grad --weights "$tmp/ck.safetensors" --input "$tmp/x.npy" --grad-output "$tmp/dy.npy" --cell lstm \
  --hidden 8 --layers 2 --device "model://?pes=4" --out "$tmp/g.safetensors" 2>&1)
grep -q "leaving out the linear head" <<<"$msg"
"$farnn" train --task adding --steps 20 --samples 128 --cell gru --hidden 12 --bidirectional --batch 16 \
  --epochs 12 --lr 0.01 --optimizer adam --device "model://?pes=3" --loss-csv "$tmp/add.csv" --quiet
check_fall "$tmp/add.csv"
# The same options from a config file ([train] section), on the simulated
# card; a flag on the command line wins over the file.
cat > "$tmp/run.toml" <<'TOML'
[train]
task = "sine"
steps = 10
samples = 8
cell = "lstm"
hidden = 4
batch = 4
epochs = 1
device = "sim://"
quiet = true
TOML
out=$("$farnn" train --config "$tmp/run.toml" --hidden 5 --loss-csv "$tmp/cfg.csv")
grep -q "hidden 5 on task sine, 8 samples x 10 steps, batch 4.*device sim://" <<<"$out"
test "$(wc -l < "$tmp/cfg.csv")" -eq 3
