#!/usr/bin/env bash
# Builds hookjournal's two npm packages from the release binary and packs them with `npm pack`:
#   @hookjournal/linux-x64  the native binary (os linux, cpu x64, libc glibc)
#   hookjournal             the launcher, which finds the first through optionalDependencies
# Nothing is published and nothing is fetched.
#
#   bash npm/build.sh                          # cargo build --release, then pack into target/npm
#   bash npm/build.sh --binary PATH --out DIR  # pack a binary built elsewhere
#
# Prints the two tarballs' paths, platform package first.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BINARY=""
OUT="$TARGET/npm"
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) BINARY="$2"; shift 2 ;;
        --out) OUT="$2"; shift 2 ;;
        *) echo "npm/build.sh: unknown argument $1 (--binary PATH, --out DIR)" >&2; exit 2 ;;
    esac
done

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) echo "npm/build.sh: builds the linux-x64 package only, on Linux x86_64" >&2; exit 1 ;;
esac
command -v npm >/dev/null || { echo "npm/build.sh: npm not found" >&2; exit 1; }

if [ -z "$BINARY" ]; then
    (cd "$ROOT" && cargo build --release --locked -p hookjournal >&2)
    BINARY="$TARGET/release/hookjournal"
fi
[ -x "$BINARY" ] || { echo "npm/build.sh: $BINARY is not an executable" >&2; exit 1; }

# The packages carry the binary's own version; the launcher's package.json must say the same.
VERSION="$("$BINARY" --version | sed -n 's/^hookjournal \([^ ]*\)$/\1/p')"
[ -n "$VERSION" ] || { echo "npm/build.sh: $BINARY --version does not say its version" >&2; exit 1; }
LAUNCHER_VERSION="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$ROOT/npm/hookjournal/package.json")"
if [ "$VERSION" != "$LAUNCHER_VERSION" ]; then
    echo "npm/build.sh: the binary is $VERSION but npm/hookjournal/package.json says $LAUNCHER_VERSION" >&2
    exit 1
fi
grep -q "\"@hookjournal/linux-x64\": \"$VERSION\"" "$ROOT/npm/hookjournal/package.json" || {
    echo "npm/build.sh: npm/hookjournal/package.json does not depend on @hookjournal/linux-x64 $VERSION" >&2
    exit 1
}

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/linux-x64/bin" "$OUT"

install -m 0755 "$BINARY" "$STAGE/linux-x64/bin/hookjournal"
# Symbols and debug info are of no use in the package (a panic is one line, never a backtrace).
if command -v strip >/dev/null; then
    strip "$STAGE/linux-x64/bin/hookjournal"
fi
cp "$ROOT/LICENSE-MIT" "$ROOT/LICENSE-APACHE" "$STAGE/linux-x64/"
cat > "$STAGE/linux-x64/package.json" <<JSON
{
  "name": "@hookjournal/linux-x64",
  "version": "$VERSION",
  "description": "The hookjournal binary for Linux x64 (glibc), installed by the hookjournal package.",
  "homepage": "https://github.com/hookjournal/hookjournal",
  "repository": {
    "type": "git",
    "url": "git+https://github.com/hookjournal/hookjournal.git"
  },
  "license": "MIT OR Apache-2.0",
  "os": ["linux"],
  "cpu": ["x64"],
  "libc": ["glibc"],
  "files": ["bin/hookjournal", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
  "preferUnplugged": true
}
JSON
cat > "$STAGE/linux-x64/README.md" <<MD
# @hookjournal/linux-x64

The \`hookjournal\` $VERSION binary for Linux x64 (glibc). Install \`hookjournal\` instead: npm
picks this package for you on Linux x64 (\`npx hookjournal\`, \`npm install -g hookjournal\`).
MD

cp -R "$ROOT/npm/hookjournal" "$STAGE/hookjournal"
cp "$ROOT/LICENSE-MIT" "$ROOT/LICENSE-APACHE" "$STAGE/hookjournal/"

for pkg in linux-x64 hookjournal; do
    (cd "$STAGE/$pkg" && npm pack --silent --pack-destination "$OUT" >/dev/null)
done
echo "$OUT/hookjournal-linux-x64-$VERSION.tgz"
echo "$OUT/hookjournal-$VERSION.tgz"
