# Debian packages into a cache, for the fetch scripts (tests/realstack, tests/torchbed,
# tests/prometheus): apt-get on a private sources file, private lists and an empty status, so
# nothing is installed and no system configuration changes. Sourced.
#
#   debian_archive             sets APT_URI and APT_SUITE from the machine's own apt sources
#                              (deb822 or one-line style); returns 1 when there is none
#   private_apt DIR SUITE COMPONENTS...  (APT_ARCH: another architecture's packages, e.g. arm64)
#                              writes DIR's sources list, sets the array apt_opts for apt-get,
#                              and runs apt-get update; returns 1 when that fails

debian_archive() {
    APT_URI= APT_SUITE=
    local f u s
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        u=$(awk '/^URIs:/ {print $2; exit}' "$f"); s=$(awk '/^Suites:/ {print $2; exit}' "$f")
        case "$u" in *security*) continue ;; esac
        [ -n "$u" ] && [ -n "$s" ] && { APT_URI=$u; APT_SUITE=$s; break; }
    done
    if [ -z "$APT_URI" ]; then
        read -r APT_URI APT_SUITE < <(awk '$1 == "deb" && $2 !~ /security/ { i = 2; if ($2 ~ /^\[/) i = 3; print $i, $(i+1); exit }' \
                                      /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null) || true
    fi
    [ -n "$APT_URI" ] && [ -n "$APT_SUITE" ]
}

private_apt() {
    local work=$1 suite=$2; shift 2
    local keyring=/usr/share/keyrings/debian-archive-keyring.gpg signed=
    [ -f "$keyring" ] && signed="[signed-by=$keyring] "
    mkdir -p "$work/lists/partial" "$work/archives/partial"
    echo "deb ${signed}$APT_URI $suite $*" > "$work/sources.list"
    : > "$work/status"
    apt_opts=(-o APT::Sandbox::User=root -o Dir::Etc::sourcelist="$work/sources.list" -o Dir::Etc::sourceparts=/dev/null
              -o Dir::Etc::preferencesparts=/dev/null -o Dir::State::Lists="$work/lists"
              -o Dir::Cache::archives="$work/archives" -o Dir::State::status="$work/status"
              -o APT::Architecture="${APT_ARCH:-$(dpkg --print-architecture)}" -o APT::Architectures="${APT_ARCH:-$(dpkg --print-architecture)}"
              -o Debug::NoLocking=1 -q)
    apt-get "${apt_opts[@]}" update >&2
}

# fetch_packages CACHE "COMPONENTS" PACKAGES...: the packages (without their dependencies) from the
# machine's own suite, unpacked into CACHE/root; a stamp naming them makes a second call free.
# Prints CACHE/root; returns 77 with a reason on stderr when it cannot fetch.
fetch_packages() {
    local cache=$1 components=$2; shift 2
    local stamp="$cache/.complete" deb
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$*" ]; then echo "$cache/root"; return 0; fi
    command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || { echo "fetch: needs apt-get and dpkg-deb" >&2; return 77; }
    debian_archive || { echo "fetch: no Debian archive in the apt sources" >&2; return 77; }
    rm -rf "$cache/debs" "$cache/root"
    mkdir -p "$cache/debs" "$cache/root"
    # shellcheck disable=SC2086  # the components are words
    private_apt "$cache/apt" "$APT_SUITE" $components || { echo "fetch: apt-get update failed" >&2; return 77; }
    (cd "$cache/debs" && apt-get "${apt_opts[@]}" download "$@" >&2) || { echo "fetch: download failed" >&2; return 77; }
    for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$cache/root"; done
    rm -rf "$cache/debs"
    echo "$*" > "$stamp"
    echo "$cache/root"
}
