#!/usr/bin/env bash
# Bad input to the farnn CLI: each case must exit non-zero with one
# "farnn: error:" line (or CLI11's usage error) naming the problem, and leave
# no output file behind.
# Usage: cli_errors.sh <farnn binary> <grad_ref dir>
set -uo pipefail
farnn=$1 ref=$2/lstm_1l
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# expect <phrase> <args...>: non-zero exit, phrase in stderr, no $tmp/out.*
expect() {
  local phrase=$1
  shift
  local err rc
  err=$("$farnn" "$@" 2>&1 >/dev/null)
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "FAIL (exit 0): $*"; fail=1
  elif ! grep -qF -- "$phrase" <<<"$err"; then
    echo "FAIL (message '$err' lacks '$phrase'): $*"; fail=1
  elif compgen -G "$tmp/out*" >/dev/null; then
    echo "FAIL (output left behind): $*"; ls "$tmp"; fail=1; rm -f "$tmp"/out*
  else
    echo "ok: $phrase"
  fi
}
printf '[train]\ntask = "sine"\nhidden = 3\nepoch = 3\n' > "$tmp/typo.toml"
expect "line 4: 'epoch' is no option of farnn train" train --config "$tmp/typo.toml" --loss-csv "$tmp/out.csv"
expect "was not readable" train --config "$tmp/missing.toml" --loss-csv "$tmp/out.csv"
# What CLI11 would misread or name by neither file nor line is refused with both.
printf '[train]\nloss-csv = "run#1.csv"\n' > "$tmp/hash.toml"
expect "--config $tmp/hash.toml: line 2: a '#' inside quotes" train --config "$tmp/hash.toml"
printf '[train]\nbogus = 3\n' > "$tmp/unknown.toml"
expect "line 2: 'bogus' is no option of farnn train" train --config "$tmp/unknown.toml"
printf '[train]\nhidden = 3\nhidden = 4\n' > "$tmp/twice.toml"
expect "line 3: 'hidden' was given on line 2 already" train --config "$tmp/twice.toml"
printf '[train]\nloss-csv = my loss.csv\n' > "$tmp/blank.toml"
expect "line 2: more than one word after '='; quote a value with blanks" train --config "$tmp/blank.toml"
printf '[train]\nlr = 0.05;x\n' > "$tmp/semi.toml"
expect "line 2: ';' is no comment here" train --config "$tmp/semi.toml"
printf 'hidden = 3\n' > "$tmp/nosection.toml"
expect "line 1: an option outside the [train] section (there, spell it train.hidden)" train --config "$tmp/nosection.toml"
printf '\xef\xbb\xbf[train]\n' > "$tmp/bom.toml"
expect "line 1: the file starts with a byte-order mark" train --config "$tmp/bom.toml"
# ... and what it reads right passes: a ; comment line, a # comment after a
# quoted value, a quoted value with a blank, a bare flag, train.name before [train].
printf 'train.epochs = 1\n[train]\n; ini comment\ntask = "sine" # the task\nhidden = 4\nsamples = 8\nquiet\nloss-csv = "%s/o k.csv"\n' \
  "$tmp" > "$tmp/good.toml"
if "$farnn" train --config "$tmp/good.toml" >/dev/null 2>&1 && [ -s "$tmp/o k.csv" ]; then
  echo "ok: a config file with comments, a quoted blank, a flag and train.name reads"; rm -f "$tmp/o k.csv"
else
  echo "FAIL: the good config file was refused"; fail=1
fi
# Outputs: not an input, not each other, not a link (it would be replaced).
cp "$ref/x.npy" "$tmp/in.npy"
expect "--checkpoint $tmp/in.npy: the same file as the input --x" train --x "$tmp/in.npy" --y "$tmp/in.npy" \
  --hidden 4 --checkpoint "$tmp/in.npy"
expect "--out $ref/W.safetensors: the same file as the input --weights" grad --weights "$ref/W.safetensors" \
  --input "$ref/x.npy" --grad-output "$ref/dy.npy" --hidden 5 --out "$ref/W.safetensors"
expect "--loss-csv $tmp/./out.a: the same file as --checkpoint" train --task sine --hidden 4 --checkpoint "$tmp/out.a" \
  --loss-csv "$tmp/./out.a"
ln -s /dev/null "$tmp/link.csv"
expect "--loss-csv $tmp/link.csv: exists and is not a plain file" train --task sine --hidden 4 --loss-csv "$tmp/link.csv"
# Adam has no momentum; an update that overflows ends the run before a checkpoint keeps it.
expect "--momentum applies to --optimizer sgd" train --task sine --hidden 4 --momentum 0.9 --checkpoint "$tmp/out.st"
expect "the update of step 1 made a parameter non-finite" train --task sine --hidden 4 --samples 8 --batch 8 \
  --steps 10 --lr 3.4e38 --checkpoint "$tmp/out.st"
# A run that fails keeps the record of the steps that ran (the loss curve says why).
expect "the record of its 1 steps is in $tmp/rec.csv" train --task sine --hidden 4 --samples 16 --batch 8 \
  --epochs 4 --optimizer sgd --momentum 0 --clip 0 --lr 1e30 --loss-csv "$tmp/rec.csv"
if [ "$(wc -l < "$tmp/rec.csv")" = 2 ]; then echo "ok: the failed run's loss CSV holds its step"; else
  echo "FAIL: the failed run's loss CSV is missing or wrong"; fail=1; fi
# Malformed lines are named by file and line (CLI11 said "INI was not able to parse").
printf '[train]\ntask = "sine\n' > "$tmp/quote.toml"
expect "--config $tmp/quote.toml: line 2: a quoted value must end with its quote" train --config "$tmp/quote.toml" \
  --loss-csv "$tmp/out.csv"
printf '[train\n' > "$tmp/section.toml"
expect "--config $tmp/section.toml: line 1: farnn reads one section, [train]" train --config="$tmp/section.toml" \
  --loss-csv "$tmp/out.csv"
printf '[train]\n# runs\n\nhidden 3\n' > "$tmp/noeq.toml"
expect "--config $tmp/noeq.toml: line 4: expected option = value: hidden 3" train --config "$tmp/noeq.toml" \
  --loss-csv "$tmp/out.csv"
grad=(grad --weights "$ref/W.safetensors" --input "$ref/x.npy" --grad-output "$ref/dy.npy" --out "$tmp/out.st")
expect "cannot open" grad --weights "$tmp/missing.safetensors" --input "$ref/x.npy" --grad-output "$ref/dy.npy" \
  --hidden 5 --out "$tmp/out.st"
expect "has shape (20, 3), a 1-layer LSTM, input 3, hidden 4 needs (16, 3)" "${grad[@]}" --cell lstm --hidden 4
expect "parameter 'weight_ih_l1' of a 2-layer LSTM, input 3, hidden 5 is missing" "${grad[@]}" --hidden 5 --layers 2
expect "weight_ih_l0' has shape (20, 3), a 1-layer GRU" "${grad[@]}" --cell gru --hidden 5
expect "is missing" "${grad[@]}" --cell lstm --hidden 5 --bidirectional
expect "grad-output has shape" grad --weights "$ref/W.safetensors" --input "$ref/x.npy" --grad-output "$ref/x.npy" \
  --hidden 5 --out "$tmp/out.st"
# NaN in the input.
python3 - "$ref/x.npy" "$tmp/nan.npy" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[-4:] = b"\x00\x00\xc0\x7f"  # the last float32 becomes NaN
open(sys.argv[2], "wb").write(data)
PY
expect "non-finite" grad --weights "$ref/W.safetensors" --input "$tmp/nan.npy" --grad-output "$ref/dy.npy" \
  --hidden 5 --out "$tmp/out.st"
# NaN in a weight: named by its tensor (the device would only propagate it).
python3 - "$ref/W.safetensors" "$tmp/wnan.safetensors" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
data[-4:] = b"\x00\x00\xc0\x7f"  # the last float32 of the last tensor becomes NaN
open(sys.argv[2], "wb").write(data)
PY
expect "holds a non-finite value" grad --weights "$tmp/wnan.safetensors" --input "$ref/x.npy" --grad-output "$ref/dy.npy" \
  --hidden 5 --out "$tmp/out.st"
# A seed is 0..2^62: -1 once wrapped to 2^64 - 1 and ran.
expect "--seed: Value -1 not in range" train --task sine --seed -1 --loss-csv "$tmp/out.csv"
expect "--seed: Value 99999999999999999999 not in range" train --task sine --seed 99999999999999999999 \
  --loss-csv "$tmp/out.csv"
# compare: a tolerance that is no number, and a file with no tensors.
expect "--rtol must be a finite number" compare "$ref/W.safetensors" "$ref/W.safetensors" --rtol nan
expect "--rtol must be a finite number" compare "$ref/W.safetensors" "$ref/W.safetensors" --rtol -1
python3 -c 'import struct,sys; h=b"{}"; open(sys.argv[1],"wb").write(struct.pack("<Q",len(h))+h)' "$tmp/empty.st"
expect "holds no tensors" compare "$ref/W.safetensors" "$tmp/empty.st"
head -c 100 "$ref/W.safetensors" > "$tmp/trunc.safetensors"
expect "trunc.safetensors" grad --weights "$tmp/trunc.safetensors" --input "$ref/x.npy" --grad-output "$ref/dy.npy" \
  --hidden 5 --out "$tmp/out.st"
expect "--speed" "${grad[@]}" --hidden 5 --speed 3
expect "--cell" "${grad[@]}" --hidden 5 --cell rnn
expect "this build simulates one farnn_core" "${grad[@]}" --hidden 5 --device "sim://?pes=8"
expect "unknown option 'pes_'" "${grad[@]}" --hidden 5 --device "model://?pes_=4"
# A layer's weights are named by cell and hidden alone (a B=1 T=1 placeholder was printed).
expect "farnn: error: layer LSTM H=5: hidden 5 is above the device's maximum 4" "${grad[@]}" --hidden 5 --device "model://?hidden=4"
expect "farnn: error: layer LSTM H=5: the recurrent weights of hidden 5 do not fit a bank" "${grad[@]}" --hidden 5 \
  --device "model://?depth=8"
expect "give --task" train --hidden 4 --checkpoint "$tmp/out.st"
# The other data source's options would be ignored: refused.
expect "excludes --lengths" train --task sine --hidden 4 --lengths "$ref/x.npy" --checkpoint "$tmp/out.st"
expect "excludes --x" train --x "$ref/x.npy" --y "$ref/x.npy" --steps 10 --hidden 4 --checkpoint "$tmp/out.st"
# Output folders are checked before anything runs; a head or a layer the
# device cannot hold is refused before anything is allocated for it.
expect "--plot $tmp/nodir/p.svg: cannot write into $tmp/nodir" train --task sine --hidden 4 --epochs 1 \
  --plot "$tmp/nodir/p.svg" --checkpoint "$tmp/out.st"
expect "hidden 2000 is above the device's maximum 1024" train --task sine --hidden 2000 --epochs 1 \
  --checkpoint "$tmp/out.st"
expect "outputs must be from 1 to 1048576" train --task sine --hidden 4 --epochs 1 --outputs 2000000000 \
  --checkpoint "$tmp/out.st"
expect "cannot open" train --hidden 4 --x "$ref/x.npy" --y "$ref/x.npy" --lengths "$tmp/none.npy" --checkpoint "$tmp/out.st"
# Lengths past the input's T are named with their file (the driver's message
# named no file); integer dtypes are read, but a float that is no whole number is not.
# npy <file> <descr> <struct format char> <values...>: a 1-D .npy (no NumPy needed).
npy() {
  python3 - "$@" <<'PY'
import struct, sys
path, descr, fmt, vals = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
vals = [float(v) if fmt in "fd" else int(v) for v in vals]
h = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(vals))
h += " " * (63 - (10 + len(h)) % 64) + "\n"
open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + struct.pack("<%d%s" % (len(vals), fmt), *vals))
PY
}
npy "$tmp/len9.npy" '<i8' q 9 2 1
expect "len9.npy: length 9 of sequence 0 is not a whole number in 1..4 (the input's T)" "${grad[@]}" --hidden 5 \
  --lengths "$tmp/len9.npy"
npy "$tmp/lenf.npy" '<f4' f 2.5 2 1
expect "lenf.npy: length 2.5 of sequence 0 is not a whole number in 1..4" "${grad[@]}" --hidden 5 --lengths "$tmp/lenf.npy"
npy "$tmp/lend.npy" '<f8' d 3 2 1
npy "$tmp/leni.npy" '<i4' i 3 2 1
expect "dtype '<f8' is not supported, expected '<f4' (float32) or a little-endian integer" "${grad[@]}" --hidden 5 \
  --lengths "$tmp/lend.npy"
if "$farnn" "${grad[@]}" --hidden 5 --lengths "$tmp/leni.npy" >/dev/null 2>&1 && [ -s "$tmp/out.st" ]; then
  echo "ok: int32 lengths read"; rm -f "$tmp"/out*
else
  echo "FAIL: int32 lengths refused"; fail=1
fi
# Class indices for --loss ce may be integers too (NumPy saves them as int64).
npy "$tmp/labels.npy" '<i8' q 0 2 1
if "$farnn" train --x "$ref/x.npy" --y "$tmp/labels.npy" --loss ce --hidden 4 --epochs 1 --quiet \
    --checkpoint "$tmp/out.st" >/dev/null 2>&1 && [ -s "$tmp/out.st" ]; then
  echo "ok: int64 class indices read"; rm -f "$tmp"/out*
else
  echo "FAIL: int64 class indices refused"; fail=1
fi
# MSE targets of one output per sequence may come as (N,).
npy "$tmp/targets.npy" '<f4' f 0.5 -1 2
if "$farnn" train --x "$ref/x.npy" --y "$tmp/targets.npy" --hidden 3 --epochs 1 --quiet >/dev/null 2>&1; then
  echo "ok: (N,) MSE targets read as (N, 1)"; else echo "FAIL: (N,) MSE targets refused"; fail=1; fi
expect "targets have shape (4, 3, 3), expected (4, 3, 2)" train --hidden 4 --x "$ref/x.npy" --y "$ref/x.npy" \
  --outputs 2 --checkpoint "$tmp/out.st"
expect "--lr must be a positive number" train --hidden 4 --task sine --lr -1 --checkpoint "$tmp/out.st"
expect "--gemm-chunks: Value 0 not in range 1 to 65535" train --hidden 4 --task sine --gemm-chunks 0 \
  --checkpoint "$tmp/out.st"
expect "unknown compute backend 'gpu' (this build has: cpu" train --hidden 4 --task sine --backend gpu \
  --checkpoint "$tmp/out.st"
expect "unknown compute backend 'gpu' (this build has: cpu" "${grad[@]}" --hidden 5 --backend gpu
# The subcommand's help names --config, which belongs to the top-level app.
if "$farnn" train --help | grep -qF -- "farnn train --config FILE"; then
  echo "ok: farnn train --help names --config"
else
  echo "FAIL: farnn train --help does not name --config"; fail=1
fi
# --backend cuda where no GPU answers: the build's CUDA backend says what is
# missing; a build without one names the backends it has.
if ! nvidia-smi -L >/dev/null 2>&1; then
  if "$farnn" train --help | grep -q "compute backend: cpu, cuda"; then
    missing="cuda backend: no"
  else
    missing="unknown compute backend 'cuda'"
  fi
  expect "$missing" train --hidden 4 --task sine --backend cuda --checkpoint "$tmp/out.st"
  expect "$missing" "${grad[@]}" --hidden 5 --backend cuda
fi
# A run that fails after an epoch: the checkpoint written after the last good
# epoch stays, and the error says which epoch it holds.
expect "keeps the state after epoch 1 of 4" train --task sine --hidden 4 --samples 8 --batch 8 --epochs 4 \
  --optimizer sgd --momentum 0 --clip 0 --lr 1e30 --checkpoint "$tmp/kept.safetensors"
if [ -s "$tmp/kept.safetensors" ]; then echo "ok: the last good checkpoint stays"; else
  echo "FAIL: no checkpoint after a failure in epoch 2"; fail=1; fi
exit $fail
