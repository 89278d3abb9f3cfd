/* cudashim check: before an upgrade (or after one), what this machine has and what would work,
 * without running the user's job. The machine: the driver the loader would pick (its version
 * from its file name; the CUDA it supports asked of it in a child process, bounded in time, else
 * from the reference tables), the kernel module, the GPUs when a driver and GPU answer, the
 * frameworks of a Python environment (read from their files: torch/version.py, dist-info; never
 * imported), CUDA_HOME's nvcc, and the CUDA libraries the loader would pick. The conflicts come
 * from the shim's own rules (shim/rules/, pure: the same driver-too-old and library-not-found a
 * failing job would get), run here on evidence read from the files; the answers to --want from
 * the reference tables and the shim's planner (shim/base/alternatives.c).
 *
 *   cudashim check [--python PATH] [--want SPEC]... [--json]
 *   SPEC: torch==2.9, cuda=13.0, driver=580
 * Exit status: 0 the wanted stack works here, 1 something must change, 2 bad arguments. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../shim/base/alternatives.h"
#include "../../shim/base/build_info.h"
#include "../../shim/trace/findings.h"
#include "../../shim/evidence/inventory.h"
#include "../../shim/evidence/needed_files.h"
#include "../../shim/evidence/gpu_code_file.h"
#include "../../shim/base/reference_data.h"
#include "../../shim/base/library_names.h"
#include "../../shim/rules/rules.h"
#include "../../shim/base/gemm_math.h"
#include "cli.h"

/* The rules' sink, here: what they find becomes a conflict line (summary, then the fix). */
static json_t *found;
static const char *const finding_ids[] = {
#define CS_FINDING(name, id, sevs, doc) id,
#include "../../shim/trace/findings_table.h"
#undef CS_FINDING
};
void cs_finding(enum cs_finding_id f, enum cs_severity sev, const char *key, const char *summary, const char *fix,
                const char *evidence_json)
{
    (void)key, (void)evidence_json;
    static const char *const sevs[] = { "info", "warning", "error" };
    if (sev < CS_WARNING || !found) return;
    json_array_append_new(found, json_sprintf("%s [%s] %s. Fix: %s", sevs[sev], finding_ids[f], summary, fix));
}


/* --- the machine --------------------------------------------------------------------------- */

/* Where the loader would find name (LD_LIBRARY_PATH, then the system directories; the shim's
 * own replay of the search, needed_files.c): 1 and the real path; a name there whose link target
 * is missing is said in dangling. */
static int loader_pick(const char *name, char *out, size_t cap, char *dangling, size_t dcap)
{
    char path[PATH_MAX];
    if (!cs_needed_search(name, NULL, "", path, sizeof path, dangling, dcap)) return 0;
    if (!realpath(path, out)) snprintf(out, cap, "%s", path);
    return 1;
}

/* "libcuda.so.535.261.03" -> "535.261.03"; "libnccl.so.2.22.3" -> "2.22.3" */
static const char *file_version(const char *path)
{
    const char *so = strstr(strrchr(path, '/') ? strrchr(path, '/') : path, ".so.");
    return so && strchr(so + 4, '.') ? so + 4 : NULL;
}

/* The newest CUDA a driver of this version supports, from the toolkit table (its bundled driver). */
static int cuda_of_driver(const char *version)
{
    int best = 0;
    for (int i = 0; version && i < cs_ref_toolkit_count; i++)
        if (cs_ref_toolkit[i].linux_min && cs_version_order(version, cs_ref_toolkit[i].linux_min) >= 0) best = cs_ref_toolkit[i].cuda;
    return best;
}

struct gpu { char name[256]; int cc, watchdog; };
struct machine {
    char driver_path[PATH_MAX], driver_version[64], kernel_module[128], dangling_driver[2 * PATH_MAX + 8];
    int driver_cuda, driver_cuda_asked, init_result, ngpus;
    struct gpu gpus[8];
    char nvcc_home[PATH_MAX], nvcc_release[16];
    json_t *python;  /* what the Python environment's files say */
};

/* Asked of the driver itself in a child (cuDriverGetVersion needs no GPU; the device questions
 * need one), 10 s at most: a driver that hangs holds nothing of ours. */
static void ask_driver(struct machine *m)
{
    int fds[2];
    if (pipe(fds)) return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(10);
        void *h = dlopen(m->driver_path, RTLD_NOW | RTLD_LOCAL);
        int (*init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : NULL;
        int (*ver)(int *) = h ? (int (*)(int *))dlsym(h, "cuDriverGetVersion") : NULL;
        int (*count)(int *) = h ? (int (*)(int *))dlsym(h, "cuDeviceGetCount") : NULL;
        int (*get)(int *, int) = h ? (int (*)(int *, int))dlsym(h, "cuDeviceGet") : NULL;
        int (*name)(char *, int, int) = h ? (int (*)(char *, int, int))dlsym(h, "cuDeviceGetName") : NULL;
        int (*attr)(int *, int, int) = h ? (int (*)(int *, int, int))dlsym(h, "cuDeviceGetAttribute") : NULL;
        FILE *f = fdopen(fds[1], "w");
        if (!f || !ver) _exit(1);
        int v = 0, n = 0, r = init ? init(0) : -1;
        ver(&v);
        fprintf(f, "version %d\ninit %d\n", v, r);
        if (r == 0 && count && !count(&n))
            for (int i = 0; i < n && i < 8; i++) {
                int dev = 0, major = 0, minor = 0, watchdog = 0;
                char nm[256] = "";
                if (get && !get(&dev, i) && name) name(nm, sizeof nm, dev);
                /* COMPUTE_CAPABILITY_MAJOR, MINOR; KERNEL_EXEC_TIMEOUT (a display's watchdog) */
                if (attr) attr(&major, 75, dev), attr(&minor, 76, dev), attr(&watchdog, 17, dev);
                fprintf(f, "gpu %d %d %s\n", major * 10 + minor, watchdog != 0, nm);
            }
        fclose(f);
        _exit(0);
    }
    close(fds[1]);
    if (pid < 0) { close(fds[0]); return; }
    FILE *f = fdopen(fds[0], "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        int cc, wd = 0, used = 0;
        if (sscanf(line, "version %d", &m->driver_cuda_asked) == 1) continue;
        if (sscanf(line, "init %d", &m->init_result) == 1) continue;
        if (m->ngpus < 8 && sscanf(line, "gpu %d %d %n", &cc, &wd, &used) >= 2 && used) {
            m->gpus[m->ngpus].cc = cc, m->gpus[m->ngpus].watchdog = wd;
            snprintf(m->gpus[m->ngpus].name, sizeof m->gpus[0].name, "%s", line + used);
            m->ngpus++;
        }
    }
    if (f) fclose(f);
    int st;
    waitpid(pid, &st, 0);
}

/* The Python environment, from its files: a small script the interpreter runs (it imports no
 * framework: importing torch would load CUDA). */
static const char py_probe[] =
    "import json, sys, os\n"
    "import importlib.util as u\n"
    "try:\n"
    "    import importlib.metadata as md\n"
    "    dists = {d.metadata['Name'].lower(): d.version for d in md.distributions() if d.metadata['Name']}\n"
    "except Exception:\n"
    "    dists = {}\n"
    "out = {'python': sys.version.split()[0], 'executable': sys.executable, 'frameworks': {}, 'nvidia': {}}\n"
    "for name in ('torch', 'tensorflow', 'jaxlib', 'jax'):\n"
    "    try:\n"
    "        s = u.find_spec(name)\n"
    "    except Exception:\n"
    "        s = None\n"
    "    if not s or not s.submodule_search_locations:\n"
    "        continue\n"
    "    d = list(s.submodule_search_locations)[0]\n"
    "    f = {'path': d, 'version': dists.get(name, '')}\n"
    "    for rel in ('version.py', 'python/platform/build_info.py', 'version.py'):\n"
    "        p = os.path.join(d, rel)\n"
    "        if os.path.isfile(p):\n"
    "            f['text'] = open(p, errors='replace').read(8192)\n"
    "            break\n"
    "    out['frameworks'][name] = f\n"
    "for k, v in dists.items():\n"
    "    if k.startswith('nvidia-') or k.startswith('jax-cuda'):\n"
    "        out['nvidia'][k] = v\n"
    "print(json.dumps(out))\n";

static json_t *read_python(const char *python)
{
    static char buf[1 << 16];
    char *argv[] = { (char *)python, "-c", (char *)py_probe, NULL };
    capture_output(argv, 30, buf, sizeof buf);
    return json_loads(buf, 0, NULL);
}

static void read_nvcc(struct machine *m)
{
    const char *home = getenv("CUDA_HOME");
    if (!home || !*home) home = getenv("CUDA_PATH");
    if (!home || !*home) home = "/usr/local/cuda";
    char nvcc[PATH_MAX + 16], out[4096];
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", home);
    if (access(nvcc, X_OK)) return;
    snprintf(m->nvcc_home, sizeof m->nvcc_home, "%s", home);
    char *argv[] = { nvcc, "--version", NULL };
    capture_output(argv, 30, out, sizeof out);
    const char *r = strstr(out, "release ");
    if (r) sscanf(r + 8, "%15[0-9.]", m->nvcc_release);
}

static int torch_cuda_of(json_t *fw, char *version, size_t cap)
{
    const char *text = json_string_value(json_object_get(fw, "text"));
    const char *dist = json_string_value(json_object_get(fw, "version"));
    version[0] = 0;
    int cuda = text ? cs_torch_version_py(text, version, cap) : -1;  /* the shim's own parser */
    if (cuda >= 0) return cuda;
    snprintf(version, cap, "%s", dist ? dist : "");
    const char *cu = strstr(version, "+cu");
    if (cu) { int v = atoi(cu + 3); return v >= 100 ? v / 10 * 1000 + v % 10 * 10 : 0; }
    return 0;
}

/* --- what is wanted ------------------------------------------------------------------------ */

static void cuda_text(char *out, size_t cap, int code) { snprintf(out, cap, "%d.%d", code / 1000, code % 1000 / 10); }

static int torch_release_known(const char *release)
{
    for (int i = 0; i < cs_ref_torch_count; i++)
        if (!strcmp(cs_ref_torch[i].release, release)) return i;
    return -1;
}

/* Whether a build for this CUDA runs on the machine's driver: a driver of that major or newer, at
 * the major's floor when it is the driver's own major. need: "needs a driver for CUDA <label>
 * (Linux >= N)", for when it does not. */
static int runs_on_driver(const struct machine *m, int cuda, const char *label, char *need, size_t cap)
{
    const struct cs_ref_driver *floor = cs_ref_floor_for(cuda);
    int major = cuda / 1000, have = m->driver_cuda / 1000;
    int known = floor && floor->linux_min;
    snprintf(need, cap, "needs a driver for CUDA %s%s%s%s", label, known ? " (Linux >= " : "", known ? floor->linux_min : "",
             known ? ")" : "");
    return m->driver_cuda && major <= have &&
           (major < have || !known || !m->driver_version[0] || cs_version_order(m->driver_version, floor->linux_min) >= 0);
}

/* The reference row for a library version: its own major.minor's, else the nearest below it
 * (rows are kept where the CUDA majors change); NULL when below every row. */
static const struct cs_ref_build *build_row(const struct cs_ref_build *rows, int n, const char *version)
{
    const struct cs_ref_build *best = NULL;
    for (int i = 0; i < n; i++)
        if (cs_version_order(rows[i].version, version) <= 0 && (!best || cs_version_order(rows[i].version, best->version) > 0))
            best = &rows[i];
    return best;
}

/* cuDNN or NCCL at a version: its builds (one per CUDA major) against this driver, the one the
 * installed torch needs, what the loader picks now. 1 when a build that fits runs here. */
static int plan_library(const struct machine *m, const char *want, const char *want_version, json_t *lines)
{
    int nccl = !strcmp(want, "nccl");
    const char *title = nccl ? "NCCL" : "cuDNN";
    const struct cs_ref_build *row = nccl ? build_row(cs_ref_nccl, cs_ref_nccl_count, want_version)
                                          : build_row(cs_ref_cudnn, cs_ref_cudnn_count, want_version);
    char line[2048], a[16];
    if (!row) {
        const struct cs_ref_build *first = nccl ? &cs_ref_nccl[0] : &cs_ref_cudnn[0];
        snprintf(line, sizeof line, "%s %s is older than the reference tables know (data/cuda-reference.txt: %s %s and newer)",
                 title, want_version, want, first->version);
        json_array_append_new(lines, json_string(line));
        return 0;
    }
    char torch_version[32] = "";
    json_t *fw = json_object_get(json_object_get(m->python, "frameworks"), "torch");
    int tc = fw ? torch_cuda_of(fw, torch_version, sizeof torch_version) : 0;
    int works = 0, fits_torch = 0;
    for (const char *p = row->cuda_majors; *p;) {
        int major = (int)strtol(p, (char **)&p, 10);
        if (*p == ',') p++;
        if (major <= 0) break;
        char need[128];
        snprintf(a, sizeof a, "%d.x", major);
        int runs = runs_on_driver(m, major * 1000, a, need, sizeof need);
        int for_torch = tc && tc / 1000 == major;
        snprintf(line, sizeof line, "%s %s built for CUDA %d (pip install \"nvidia-%s-cu%d==%s.*\"): %s", title,
                 want_version, major, want, major, want_version, runs ? "runs on this driver" : need);
        if (for_torch) {
            size_t n = strlen(line);
            snprintf(line + n, sizeof line - n, "; the build for torch %s (CUDA %d)", torch_version, major);
        }
        json_array_append_new(lines, json_string(line));
        fits_torch |= for_torch;
        if (!tc || for_torch) works |= runs;
    }
    if (strcmp(row->version, want_version) && strncmp(want_version, row->version, strlen(row->version))) {
        snprintf(line, sizeof line, "(the CUDA majors of %s %s's builds, as for %s %s: the nearest release the reference "
                 "tables have)", title, want_version, title, row->version);
        json_array_append_new(lines, json_string(line));
    }
    int cc = m->ngpus ? m->gpus[0].cc : 0;
    if (!nccl && cc && row->lowest_cc && cc < row->lowest_cc) {
        snprintf(line, sizeof line, "cuDNN %s has no code for this GPU (sm_%d): its builds support sm_%d and newer; "
                 "keep a cuDNN before %s on this GPU", want_version, cc, row->lowest_cc, row->version);
        json_array_append_new(lines, json_string(line));
        works = 0;
    }
    if (tc && !fits_torch) {
        cuda_text(a, sizeof a, tc);
        snprintf(line, sizeof line, "torch %s is built for CUDA %s, and %s %s has no build for CUDA %d (builds for CUDA %s): "
                 "keep the %s torch brings, or change torch with it", torch_version, a, title, want_version, tc / 1000,
                 row->cuda_majors, title);
        json_array_append_new(lines, json_string(line));
    }
    /* what this machine has of it now: the environment's wheel, the copy the loader picks */
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(m->python, "nvidia"), k, v) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "nvidia-%s-cu", want);
        if (!strncmp(k, prefix, strlen(prefix))) {
            snprintf(line, sizeof line, "this environment has %s %s%s", k, json_string_value(v),
                     fw ? " (the version torch's wheel pins: pip may refuse another, or break torch's own)" : "");
            json_array_append_new(lines, json_string(line));
        }
    }
    char soname[32], path[PATH_MAX], dangling[2 * PATH_MAX + 8];
    snprintf(soname, sizeof soname, nccl ? "libnccl.so.2" : "libcudnn.so.%d", atoi(want_version));
    if (loader_pick(soname, path, sizeof path, dangling, sizeof dangling)) {
        const char *fv = file_version(path);
        snprintf(line, sizeof line, "the loader picks %s here now: %s%s%s%s", soname, path, fv ? " (" : "", fv ? fv : "", fv ? ")" : "");
        json_array_append_new(lines, json_string(line));
    }
    if (nccl) json_array_append_new(lines, json_string("every rank of a job must load the same NCCL: upgrade it on all "
                                                       "nodes at once (ranks on two NCCL versions hang in their first collective)"));
    return works;
}

/* One wanted thing against this machine: the answer lines into out; 1 when it works as it is. */
static int plan(const struct machine *m, const char *want, const char *want_version, json_t *answer)
{
    char line[4096], text[2048], a[16], b[16];
    int cc = m->ngpus ? m->gpus[0].cc : 0, driver_cuda = m->driver_cuda;
    const char *gpu = m->ngpus ? m->gpus[0].name : NULL;
    json_t *lines = json_array();
    int works = 0;
    json_object_set_new(answer, "want", json_sprintf("%s %s", want, want_version));
    if (!strcmp(want, "torch")) {
        int i = torch_release_known(want_version);
        if (i < 0) {
            snprintf(line, sizeof line, "torch %s is not in the reference tables (data/cuda-reference.txt: torch %s to %s)",
                     want_version, cs_ref_torch[0].release, cs_ref_torch[cs_ref_torch_count - 1].release);
            json_array_append_new(lines, json_string(line));
        } else {
            /* the builds of that release, each against this driver and GPU */
            for (int k = 0; k < CS_REF_TORCH_CUDAS && cs_ref_torch[i].cuda[k]; k++) {
                int c = cs_ref_torch[i].cuda[k];
                char need[128];
                cuda_text(a, sizeof a, c);
                int runs = runs_on_driver(m, c, a, need, sizeof need);
                const struct cs_ref_torcharch *arch = cs_ref_torcharch_for(c, cs_torch_release_code(want_version));
                int covered = !cc || !arch || cs_ref_torcharch_covers(arch, cc);
                char nocode[400] = "", others[160];
                if (!covered) {
                    int k = snprintf(nocode, sizeof nocode, "has no code for this GPU (sm_%d; these wheels cover sm_%d to "
                                     "sm_%dx)", cc, arch->lowest_cc, arch->highest_cc / 10);
                    if (cs_torch_releases_covering(c, cc, others, sizeof others) && k > 0 && (size_t)k < sizeof nocode)
                        snprintf(nocode + k, sizeof nocode - (size_t)k, "; torch %s's builds for CUDA %s cover it", others, a);
                }
                snprintf(line, sizeof line, "torch %s built for CUDA %s (pip install \"torch==%s.*\" --index-url "
                         "https://download.pytorch.org/whl/cu%d%d): %s", want_version, a, want_version, c / 1000,
                         c % 1000 / 10, !covered ? nocode : runs ? "runs on this driver" : need);
                works |= covered && runs;
                json_array_append_new(lines, json_string(line));
            }
            /* and the planner the shim's findings use: keep the driver, keep the build, compat */
            int newest = 0;
            for (int k = 0; k < CS_REF_TORCH_CUDAS && cs_ref_torch[i].cuda[k]; k++) newest = cs_ref_torch[i].cuda[k];
            char fv[48];
            snprintf(fv, sizeof fv, "%s", want_version);
            struct cs_machine cm = { cc, driver_cuda, m->driver_version[0] ? m->driver_version : NULL, gpu, "torch", fv,
                                     newest, 0 };
            if (!works && cs_what_would_work(&cm, text, sizeof text)) {
                snprintf(line, sizeof line, "what would work here: %s", text);
                json_array_append_new(lines, json_string(line));
            }
        }
    } else if (!strcmp(want, "cuda")) {
        int major = 0, minor = 0;
        sscanf(want_version, "%d.%d", &major, &minor);
        int c = major * 1000 + minor * 10;
        const struct cs_ref_driver *floor = cs_ref_floor_for(c), *tk = cs_ref_toolkit_for(c);
        cuda_text(a, sizeof a, c);
        works = driver_cuda && c / 1000 <= driver_cuda / 1000;
        cuda_text(b, sizeof b, driver_cuda);
        if (works)
            snprintf(line, sizeof line, "CUDA %s runs on this driver (CUDA %s)%s%s%s", a, b,
                     tk && m->driver_version[0] && cs_version_order(m->driver_version, tk->linux_min) < 0 ? "; its newest features and "
                     "JIT of its PTX need the driver it ships with (Linux >= " : "",
                     tk && m->driver_version[0] && cs_version_order(m->driver_version, tk->linux_min) < 0 ? tk->linux_min : "",
                     tk && m->driver_version[0] && cs_version_order(m->driver_version, tk->linux_min) < 0 ? ")" : "");
        else
            snprintf(line, sizeof line, "CUDA %s needs a driver for CUDA %d.x (Linux >= %s); this driver is %s%s", a, major,
                     floor && floor->linux_min ? floor->linux_min : "?", driver_cuda ? "CUDA " : "unknown", driver_cuda ? b : "");
        json_array_append_new(lines, json_string(line));
        const struct cs_ref_arch *arch = cc ? cs_ref_arch_for(cc) : NULL;
        if (arch && arch->last_major && major > arch->last_major) {
            snprintf(line, sizeof line, "the GPU (sm_%d, %s) is not supported by CUDA %d: its last is CUDA %d", cc,
                     arch->name, major, arch->last_major);
            json_array_append_new(lines, json_string(line));
            works = 0;
        }
        if (m->nvcc_release[0] && atoi(m->nvcc_release) != major) {
            snprintf(line, sizeof line, "CUDA_HOME (%s) has nvcc %s: extensions built with it (apex, flash-attn) are for "
                     "CUDA %d; rebuild them with a CUDA %d toolkit", m->nvcc_home, m->nvcc_release, atoi(m->nvcc_release), major);
            json_array_append_new(lines, json_string(line));
        }
    } else if (!strcmp(want, "nccl") || !strcmp(want, "cudnn")) {
        works = plan_library(m, want, want_version, lines);
    } else if (!strcmp(want, "driver")) {
        /* a driver branch: what the machine's framework builds need of it */
        char dv[64];
        snprintf(dv, sizeof dv, "%s%s", want_version, strchr(want_version, '.') ? "" : ".999");
        int c = cuda_of_driver(dv);
        cuda_text(a, sizeof a, c);
        works = 1;
        snprintf(line, sizeof line, "driver %s supports CUDA %s and older", want_version, c ? a : "?");
        json_array_append_new(lines, json_string(line));
        json_t *fw = json_object_get(json_object_get(m->python, "frameworks"), "torch");
        if (fw) {
            char v[32];
            int tc = torch_cuda_of(fw, v, sizeof v);
            if (tc && c && tc / 1000 > c / 1000) {
                cuda_text(b, sizeof b, tc);
                snprintf(line, sizeof line, "torch %s (CUDA %s) does not run on it: install a build for CUDA %d", v, b, c / 1000);
                works = 0;
            } else if (tc) {
                cuda_text(b, sizeof b, tc);
                snprintf(line, sizeof line, "torch %s (CUDA %s) runs on it", v, b);
            }
            if (tc) json_array_append_new(lines, json_string(line));
        }
    }
    json_object_set_new(answer, "works", json_boolean(works));
    json_object_set_new(answer, "answers", lines);
    return works;
}

/* --- the command ---------------------------------------------------------------------------- */

static void item(const char *text)
{
    char line[4200];
    snprintf(line, sizeof line, "- %s", text);
    wrap(stdout, "  ", line, CLI_WIDTH);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cudashim check [--python PATH] [--want SPEC]... [--json]\n"
               "  What this machine has (the driver the loader picks, the kernel module, the GPUs, the\n"
               "  frameworks of a Python environment, CUDA_HOME's nvcc, the CUDA libraries the loader\n"
               "  picks) and the conflicts it already has, without running a job.\n"
               "  --python PATH   the Python environment to read (default: python3 on PATH)\n"
               "  --want SPEC     torch==2.9, cuda=13.0, driver=580, nccl=2.28 or cudnn=9.17: what would\n"
               "                  work here, concretely\n"
               "  --json          one JSON object for scripts\n"
               "Exit status: 0 the wanted stack works here (or, with no --want, no conflict), 1 something\n"
               "must change, 2 bad arguments.\n");
}

/* What decides speed and memory before the job starts: the address-space limit (cudaMallocAsync
 * pools and PyTorch's expandable segments reserve address space), and the variables the
 * libraries and frameworks read for TF32, lazy loading and preallocation. */
static const char *const perf_vars[] = {
    "NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "CUDA_MODULE_LOADING", "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF", "CUBLAS_WORKSPACE_CONFIG", "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "TF_FORCE_GPU_ALLOW_GROWTH", "TORCH_BLAS_PREFER_CUBLASLT",
};

static json_t *performance_settings(void)
{
    json_t *o = json_object();
    struct rlimit as;
    char text[160];
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
        snprintf(text, sizeof text, "%llu MiB: CUDA reserves address space (cudaMallocAsync pools, expandable "
                 "segments) and may be refused", (unsigned long long)(as.rlim_cur >> 20));
    else snprintf(text, sizeof text, "unlimited");
    json_object_set_new(o, "ulimit -v (address space)", json_string(text));
    for (size_t i = 0; i < sizeof perf_vars / sizeof *perf_vars; i++) {
        const char *v = getenv(perf_vars[i]);
        if (!v) continue;
        if (!strcmp(perf_vars[i], "NVIDIA_TF32_OVERRIDE") && !strcmp(v, "0"))
            snprintf(text, sizeof text, "0: TF32 off in every NVIDIA library, whatever the framework asks");
        else snprintf(text, sizeof text, "%s", v);
        json_object_set_new(o, perf_vars[i], json_string(text));
    }
    return o;
}

int cmd_check(int argc, char **argv)
{
    const char *python = "python3";
    const char *wants[16];
    int nwants = 0, as_json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) as_json = 1;
        else if (!strcmp(argv[i], "--python") && i + 1 < argc) python = argv[++i];
        else if (!strcmp(argv[i], "--want") && i + 1 < argc && nwants < 16) wants[nwants++] = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return EXIT_CLEAN; }
        else { usage(stderr); return EXIT_USAGE; }
    }
    struct machine m;
    memset(&m, 0, sizeof m);
    /* parse the wants first: a bad one is a usage error before any work */
    char kind[16][16], ver[16][32];
    for (int i = 0; i < nwants; i++) {
        if (sscanf(wants[i], "%15[a-z]==%31s", kind[i], ver[i]) != 2 && sscanf(wants[i], "%15[a-z]=%31s", kind[i], ver[i]) != 2) {
            fprintf(stderr, "cudashim check: --want %s: expected torch==2.9, cuda=13.0, driver=580, nccl=2.28 or cudnn=9.17\n", wants[i]);
            return EXIT_USAGE;
        }
        if (strspn(ver[i], "0123456789.") != strlen(ver[i])) {
            fprintf(stderr, "cudashim check: --want %s: a version is digits and dots\n", wants[i]);
            return EXIT_USAGE;
        }
        if (strcmp(kind[i], "torch") && strcmp(kind[i], "cuda") && strcmp(kind[i], "driver") && strcmp(kind[i], "nccl") &&
            strcmp(kind[i], "cudnn")) {
            fprintf(stderr, "cudashim check: --want %s: torch, cuda, driver, nccl or cudnn\n", wants[i]);
            return EXIT_USAGE;
        }
    }
    FILE *kf = fopen("/proc/driver/nvidia/version", "re");
    if (kf) {
        char line[512];
        if (fgets(line, sizeof line, kf)) {
            const char *k = strstr(line, "Kernel Module");
            if (k) sscanf(k + 13, " %63s", m.kernel_module);
        }
        fclose(kf);
    }
    if (loader_pick("libcuda.so.1", m.driver_path, sizeof m.driver_path, m.dangling_driver, sizeof m.dangling_driver)) {
        const char *v = file_version(m.driver_path);
        if (v) snprintf(m.driver_version, sizeof m.driver_version, "%s", v);
        ask_driver(&m);
        m.driver_cuda = m.driver_cuda_asked ? m.driver_cuda_asked : cuda_of_driver(m.driver_version);
    }
    m.python = read_python(python);
    read_nvcc(&m);

    json_t *out = json_object(), *libs_found = json_array(), *conflicts = json_array(), *answers = json_array();
    char line[4096], a[16], b[16];
    /* the libraries the loader would pick */
    static const char *const names[] = { "libcudart.so.12", "libcudart.so.13", "libcudnn.so.9", "libnccl.so.2",
                                         "libcublas.so.12", "libcublas.so.13" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[PATH_MAX], dangling[2 * PATH_MAX + 8];
        int found_lib = loader_pick(names[i], path, sizeof path, dangling, sizeof dangling);
        if (found_lib || dangling[0])
            json_array_append_new(libs_found, json_pack("{s:s, s:s?, s:s?, s:s?}", "name", names[i], "path", found_lib ? path : NULL,
                                                  "version", found_lib ? file_version(path) : NULL,
                                                  "dangling_link", dangling[0] ? dangling : NULL));
    }
    /* the frameworks against the driver: the shim's own rules, said beforehand */
    json_t *fws = json_object_get(m.python, "frameworks");
    json_t *torch = json_object_get(fws, "torch");
    char tv[32] = "";
    int tc = torch ? torch_cuda_of(torch, tv, sizeof tv) : 0;
    if (!m.driver_path[0])
        json_array_append_new(conflicts, json_string(m.dangling_driver[0] ? "no driver library the loader can open: its link "
                              "points at nothing" : "no driver library (libcuda.so.1) on the loader's path: install the NVIDIA "
                              "driver, or run where a GPU and its driver are"));
    static struct cs_library libs[8];
    int nlibs = 0;
    if (m.driver_path[0]) {
        struct cs_library *l = &libs[nlibs++];
        snprintf(l->kind, sizeof l->kind, "driver"), snprintf(l->path, sizeof l->path, "%s", m.driver_path);
        snprintf(l->name, sizeof l->name, "libcuda.so.1");
        snprintf(l->file_version, sizeof l->file_version, "%s", m.driver_version);
        cuda_text(l->version, sizeof l->version, m.driver_cuda);
        snprintf(l->found_via, sizeof l->found_via, "the loader's search");
        l->code = m.driver_cuda;
    }
    if (tc) {
        struct cs_library *l = &libs[nlibs++];
        snprintf(l->kind, sizeof l->kind, "framework");
        snprintf(l->path, sizeof l->path, "torch %s", tv);
        snprintf(l->name, sizeof l->name, "torch %s", tv);
        snprintf(l->version, sizeof l->version, "%s", tv);
        snprintf(l->version_api, sizeof l->version_api, "torch/version.py (torch)");
        l->built_for_cuda = tc;
        snprintf(l->built_for_how, sizeof l->built_for_how, "torch/version.py");
    }
    /* cuDNN's and NCCL's file names do not say their CUDA (libcudnn.so.9 is the same name for
     * CUDA 12 and 13): their GPU code does, as the shim reads it in the run. */
    size_t li;
    json_t *lib;
    json_array_foreach(libs_found, li, lib) {
        const char *path = json_string_value(json_object_get(lib, "path")), *n = json_string_value(json_object_get(lib, "name"));
        const char *kind = !strncmp(n, "libcudnn.so", 11) ? "cudnn" : !strncmp(n, "libnccl.so", 10) ? "nccl" : NULL;
        if (!path || !kind || nlibs >= (int)(sizeof libs / sizeof *libs)) continue;
        struct cs_library *l = &libs[nlibs];
        memset(l, 0, sizeof *l);
        l->built_for_cuda = cs_gpu_code_cuda_of_kind(kind, path, l->built_for_how, sizeof l->built_for_how);
        if (!l->built_for_cuda) continue;
        snprintf(l->kind, sizeof l->kind, "%s", kind), snprintf(l->path, sizeof l->path, "%s", path);
        snprintf(l->name, sizeof l->name, "%s", n);
        snprintf(l->found_via, sizeof l->found_via, "the loader's search");
        json_object_set_new(lib, "built_for_cuda", json_sprintf("%d.%d", l->built_for_cuda / 1000, l->built_for_cuda % 1000 / 10));
        json_object_set_new(lib, "built_for_source", json_string(l->built_for_how));
        nlibs++;
    }
    struct cs_evidence e;
    memset(&e, 0, sizeof e);
    e.libs = libs, e.nlibs = nlibs, e.driver_version = m.driver_cuda, e.final = 1;
    e.device_cc = m.ngpus ? m.gpus[0].cc : 0, e.gpu_name = m.ngpus ? m.gpus[0].name : NULL;
    e.kernel_module = m.kernel_module[0] ? m.kernel_module : NULL;
    found = conflicts;
    cs_rule_driver_too_old(&e);
    json_array_foreach(libs_found, li, lib) {  /* a link with nothing behind it: library-not-found, beforehand */
        const char *dl = json_string_value(json_object_get(lib, "dangling_link"));
        if (!dl || json_string_value(json_object_get(lib, "path"))) continue;
        char msg[600];
        snprintf(msg, sizeof msg, "%s: cannot open shared object file: No such file or directory",
                 json_string_value(json_object_get(lib, "name")));
        e.missing_dangling = dl;
        cs_rule_loader_message(&e, msg, 0);
        e.missing_dangling = NULL;
    }
    found = NULL;
    if (m.kernel_module[0] && m.driver_version[0] && strcmp(m.kernel_module, m.driver_version)) {
        snprintf(line, sizeof line, "the driver library is %s but the kernel module is %s: CUDA fails with 803 until they "
                 "match (reboot after a driver upgrade, or reinstall one version of both)", m.driver_version, m.kernel_module);
        json_array_append_new(conflicts, json_string(line));
    }
    int all_work = json_array_size(conflicts) == 0;
    for (int i = 0; i < nwants; i++) {
        json_t *ans = json_object();
        if (!plan(&m, kind[i], ver[i], ans)) all_work = 0;
        json_array_append_new(answers, ans);
    }
    if (nwants) all_work = all_work || 0;

    json_t *gpus = json_array();
    for (int i = 0; i < m.ngpus; i++)
        json_array_append_new(gpus, json_pack("{s:s, s:i, s:s, s:b}", "name", m.gpus[i].name, "compute_capability",
                                              m.gpus[i].cc, "tensor_cores", cs_tensor_core_text(m.gpus[i].cc),
                                              "display_watchdog", m.gpus[i].watchdog));
    cuda_text(a, sizeof a, m.driver_cuda);
    json_object_set_new(out, "driver", json_pack("{s:s?, s:s?, s:s?, s:s?, s:b}", "path", m.driver_path[0] ? m.driver_path : NULL,
                        "version", m.driver_version[0] ? m.driver_version : NULL, "cuda", m.driver_cuda ? a : NULL,
                        "kernel_module", m.kernel_module[0] ? m.kernel_module : NULL, "cuda_asked", m.driver_cuda_asked != 0));
    json_object_set_new(out, "gpus", gpus);
    if (m.driver_path[0] && !m.ngpus) json_object_set_new(out, "gpu_answer", json_integer(m.init_result));
    json_object_set_new(out, "python", m.python ? json_incref(m.python) : json_null());
    json_object_set_new(out, "cuda_home", m.nvcc_home[0] ? json_pack("{s:s, s:s}", "path", m.nvcc_home, "nvcc", m.nvcc_release)
                                                         : json_null());
    json_object_set_new(out, "libraries", libs_found);
    json_object_set_new(out, "conflicts", conflicts);
    json_object_set_new(out, "wanted", answers);
    json_object_set_new(out, "works", json_boolean(all_work));
    json_t *perf = performance_settings();
    json_object_set_new(out, "performance", perf);
    if (as_json) {
        char *s = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s) puts(s);
        free(s);
    } else {
        printf("cudashim check: this machine\n");
        if (m.driver_path[0])
            printf("  driver         %s (CUDA %s%s)  %s\n", m.driver_version[0] ? m.driver_version : "?", m.driver_cuda ? a : "?",
                   m.driver_cuda_asked ? "" : ", from its version", m.driver_path);
        else printf("  driver         none the loader can find%s%s\n", m.dangling_driver[0] ? ": " : "", m.dangling_driver);
        printf("  kernel module  %s\n", m.kernel_module[0] ? m.kernel_module : "not loaded (/proc/driver/nvidia/version absent)");
        for (int i = 0; i < m.ngpus; i++)
            printf("  gpu %d          %s (sm_%d; %s%s)\n", i, m.gpus[i].name, m.gpus[i].cc, cs_tensor_core_text(m.gpus[i].cc),
                   m.gpus[i].watchdog ? "; display watchdog on: kernels longer than a few seconds are stopped" : "");
        if (m.driver_path[0] && !m.ngpus) printf("  gpus           none answered (cuInit: %d)\n", m.init_result);
        if (m.python) {
            printf("  python         %s (%s)\n", json_string_value(json_object_get(m.python, "python")),
                   json_string_value(json_object_get(m.python, "executable")));
            const char *k;
            json_t *v;
            json_object_foreach(fws, k, v) {
                char fv[32] = "";
                int c = !strcmp(k, "torch") ? torch_cuda_of(v, fv, sizeof fv) : 0;
                cuda_text(b, sizeof b, c);
                printf("  %-14s %s%s%s%s  %s\n", k, fv[0] ? fv : json_string_value(json_object_get(v, "version")),
                       c ? " (CUDA " : "", c ? b : "", c ? ")" : "", json_string_value(json_object_get(v, "path")));
            }
            json_object_foreach(json_object_get(m.python, "nvidia"), k, v) printf("  %-14s %s\n", k, json_string_value(v));
        } else {
            printf("  python         %s: not found or did not answer\n", python);
        }
        if (m.nvcc_home[0]) printf("  CUDA_HOME      %s (nvcc %s)\n", m.nvcc_home, m.nvcc_release);
        size_t i;
        json_t *l;
        json_array_foreach(libs_found, i, l) {
            const char *bf = json_string_value(json_object_get(l, "built_for_cuda"));
            printf("  %-14s %s%s%s%s%s%s%s\n", json_string_value(json_object_get(l, "name")),
                   json_object_get(l, "path") && !json_is_null(json_object_get(l, "path")) ? json_string_value(json_object_get(l, "path")) : "",
                   json_object_get(l, "dangling_link") && !json_is_null(json_object_get(l, "dangling_link")) ? " (a dangling link)" : "",
                   bf ? "  (built for CUDA " : "", bf ? bf : "", bf ? ": " : "",
                   bf ? json_string_value(json_object_get(l, "built_for_source")) : "", bf ? ")" : "");
        }
        printf("\nSPEED AND MEMORY SETTINGS\n");
        const char *k;
        json_t *v;
        json_object_foreach(perf, k, v) {
            if (json_is_string(v)) printf("  %-34s %s\n", k, json_string_value(v));
        }
        printf("\nCONFLICTS\n");
        if (!json_array_size(conflicts)) printf("  none\n");
        json_array_foreach(conflicts, i, l) item(json_string_value(l));
        json_array_foreach(answers, i, l) {
            printf("\nWANTED: %s -> %s\n", json_string_value(json_object_get(l, "want")),
                   json_is_true(json_object_get(l, "works")) ? "works here" : "something must change");
            size_t j;
            json_t *s;
            json_array_foreach(json_object_get(l, "answers"), j, s) item(json_string_value(s));
        }
    }
    json_decref(out);
    if (m.python) json_decref(m.python);
    return all_work ? EXIT_CLEAN : 1;
}
