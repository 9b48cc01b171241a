// SPDX-License-Identifier: GPL-2.0-only
/*
 * sfilterd --metrics: what the daemon and the kernel side count, in
 * Prometheus text format, served by http.c on a thread of its own. The
 * render runs on that thread: it reads only the kernel's counters (BPF
 * .bss and maps, which any thread may read), the gate's and the attaches'
 * atomics, and what the loop publishes (metrics_snapshot(); the rule hits
 * of metrics_hits.c). It never takes the runtime's lock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "daemon.h"
#include "gate_internal.h"
#include "http.h"
#include "container_id.h"
#include "c2e.h"

#include <fcntl.h>
#include <seccomp.h>
#include <unistd.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct sf_http *server;
/* Set by metrics_open() before any thread starts, never cleared: whether
 * the gate's thread and the loop count for --metrics. */
static bool on;

/* Taken by the loop, read by the render. */
static struct {
	int dispatcher;       /* its link id, 0: detached */
	uint64_t n_events;
} snap;

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static void counter(FILE *f, const char *name, const char *help);

/* Latency histograms, written by one thread and read by the render. */
static const double hist_le[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
				  0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5 };
#define HIST_BUCKETS (sizeof(hist_le) / sizeof(hist_le[0]))
struct hist {
	uint64_t bucket[HIST_BUCKETS + 1]; /* the last: +Inf alone */
	uint64_t sum_ns;
};

static void hist_add(struct hist *h, uint64_t ns)
{
	size_t i;

	for (i = 0; i < HIST_BUCKETS && ns > hist_le[i] * 1e9; i++)
		;
	__atomic_fetch_add(&h->bucket[i], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->sum_ns, ns, __ATOMIC_RELAXED);
}

/* One histogram's series; label: "" or `kind="self",` (its comma last). */
static void hist_series(FILE *f, const char *name, const char *label, struct hist *h)
{
	uint64_t cum = 0;
	size_t len = strlen(label);
	size_t i;

	for (i = 0; i <= HIST_BUCKETS; i++) {
		cum += LOAD(h->bucket[i]);
		if (i < HIST_BUCKETS)
			fprintf(f, "%s_bucket{%sle=\"%g\"} %llu\n", name, label, hist_le[i],
				(unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, label, (unsigned long long)cum);
	/* Without its last comma, in braces, or nothing. */
	fprintf(f, "%s_sum%s%.*s%s %.9f\n", name, len ? "{" : "", len ? (int)len - 1 : 0, label,
		len ? "}" : "", LOAD(h->sum_ns) / 1e9);
	fprintf(f, "%s_count%s%.*s%s %llu\n", name, len ? "{" : "", len ? (int)len - 1 : 0,
		label, len ? "}" : "", (unsigned long long)cum);
}

static void hist_print(FILE *f, const char *name, const char *help, struct hist *h)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	hist_series(f, name, "", h);
}

/* Attaches by kind: how long each took, from its request to its answer,
 * and what the answer was. Written by the loop, the gate's by its thread. */
#define ATT_ERRNO_MAX 134 /* past EHWPOISON: "other" */
static struct {
	struct hist took;
	uint64_t ok;
	uint64_t refused[ATT_ERRNO_MAX + 1];
} att[MK_KINDS];
static const char *const kind_name[MK_KINDS] = { "self", "pid", "cgroup", "gate" };
/* Gated calls: from the notification's receipt to its answer, the part of
 * the round trip that is the daemon's. Written by the gate's thread. */
static struct hist gate_took;

uint64_t metrics_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void metrics_attach(enum metrics_kind kind, int error, uint64_t t0_ns)
{
	if (kind >= MK_KINDS)
		return;
	if (t0_ns)
		hist_add(&att[kind].took, metrics_now_ns() - t0_ns);
	if (error == 0)
		__atomic_fetch_add(&att[kind].ok, 1, __ATOMIC_RELAXED);
	else /* a TSYNC conflict is the one negative answer */
		__atomic_fetch_add(&att[kind].refused[error > 0 && error < ATT_ERRNO_MAX ?
						     error : ATT_ERRNO_MAX], 1, __ATOMIC_RELAXED);
}

enum metrics_kind metrics_admin_kind(const void *req, size_t n)
{
	const struct sf_admin_attach_req *r = req;

	return n >= SF_PROTO_ADMIN_ATTACH_SIZE && r->path_len ? MK_CGROUP : MK_PID;
}

void metrics_gate(uint64_t t0_ns)
{
	hist_add(&gate_took, metrics_now_ns() - t0_ns);
}

static void attaches(FILE *f)
{
	uint64_t refused[MK_KINDS] = { 0 }, v;
	char label[32];
	size_t i, k;

	fprintf(f, "# HELP sfilter_attach_duration_seconds attaches from request to answer, "
		"by kind (self: ATTACH; pid, cgroup: ADMIN_ATTACH; gate: a listener on the "
		"agent socket, from its whole message)\n"
		"# TYPE sfilter_attach_duration_seconds histogram\n");
	for (k = 0; k < MK_KINDS; k++) {
		snprintf(label, sizeof(label), "kind=\"%s\",", kind_name[k]);
		hist_series(f, "sfilter_attach_duration_seconds", label, &att[k].took);
	}
	counter(f, "sfilter_attach_refusals_total", "attaches refused, by kind and errno");
	for (k = 0; k < MK_KINDS; k++)
		for (i = 1; i <= ATT_ERRNO_MAX; i++) {
			if (!(v = LOAD(att[k].refused[i])))
				continue;
			refused[k] += v;
			fprintf(f, "sfilter_attach_refusals_total{kind=\"%s\",errno=\"%s\"} %llu\n",
				kind_name[k], i < ATT_ERRNO_MAX && strerrorname_np((int)i) ?
				strerrorname_np((int)i) : "other", (unsigned long long)v);
		}
	counter(f, "sfilter_attaches_total", "attaches answered, by kind and result");
	for (k = 0; k < MK_KINDS; k++) {
		fprintf(f, "sfilter_attaches_total{kind=\"%s\",result=\"attached\"} %llu\n",
			kind_name[k], (unsigned long long)LOAD(att[k].ok));
		fprintf(f, "sfilter_attaches_total{kind=\"%s\",result=\"refused\"} %llu\n",
			kind_name[k], (unsigned long long)refused[k]);
	}
}

/* Cgroup ids to their paths: open_by_handle_at() of the id (a kernfs
 * node's file handle) on the cgroup2 mount, then the descriptor's path.
 * Labels only: nothing is decided from them. */
#define CG_CACHE 1024
static struct { uint64_t id; char path[512]; } cg_cache[CG_CACHE];
static size_t cg_n;
static int cg_mnt = -1;
static char cg_root[256];

/* At metrics_open(), before any thread: the render and the gate's thread
 * read cg_mnt and cg_root alone. */
static void cg_mount(void)
{
	char line[1024], mnt[256], fstype[64];
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	while (f && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "cgroup2") ||
		    sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1)
			continue;
		cg_mnt = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		snprintf(cg_root, sizeof(cg_root), "%s", mnt);
		break;
	}
	if (f)
		fclose(f);
}

/* The paths the gate's thread read (metrics_cgroup_of()), by id, for the
 * render: by the scrape a short-lived container's cgroup may be gone,
 * and open_by_handle_at() with it. Direct-mapped, each entry under a
 * sequence count (odd while written; one writer, the gate's thread). */
#define GPATHS 512
static struct gpath { uint32_t seq; uint64_t id; char path[512]; } gpaths[GPATHS];

static void gpath_put(uint64_t id, const char *path)
{
	struct gpath *e = &gpaths[id % GPATHS];
	uint32_t seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&e->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->id = id;
	snprintf(e->path, sizeof(e->path), "%s", path);
	__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
}

static bool gpath_get(uint64_t id, char *out, size_t size)
{
	struct gpath *e = &gpaths[id % GPATHS];
	uint32_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	uint64_t got;

	if (!seq || (seq & 1))
		return false;
	got = e->id;
	snprintf(out, size, "%s", e->path);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return got == id && __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq;
}

static const char *cg_path(uint64_t id)
{
	struct { struct file_handle fh; uint64_t id; } h;
	char fdp[64], buf[512];
	const char *known;
	size_t i, rl = 0;
	ssize_t n;
	int fd;

	for (i = 0; i < cg_n; i++)
		if (cg_cache[i].id == id)
			return cg_cache[i].path;
	if (cg_mnt < 0)
		return "";
	if (gpath_get(id, buf, sizeof(buf))) {
		known = buf;
	} else {
		h.fh.handle_bytes = sizeof(uint64_t);
		h.fh.handle_type = 0xfe; /* FILEID_KERNFS */
		memcpy(h.fh.f_handle, &id, sizeof(id));
		fd = open_by_handle_at(cg_mnt, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return ""; /* gone, or not a cgroup2 id */
		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", fd);
		n = readlink(fdp, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return "";
		buf[n] = 0;
		if (strcmp(cg_root, "/"))
			rl = strlen(cg_root);
		known = strncmp(buf, cg_root, rl) ? buf : *(buf + rl) ? buf + rl : "/";
	}
	if (cg_n == CG_CACHE)
		cg_n = 0; /* start over: a cache, not a record */
	cg_cache[cg_n].id = id;
	snprintf(cg_cache[cg_n].path, sizeof(cg_cache[cg_n].path), "%s", known);
	return cg_cache[cg_n++].path;
}

uint64_t metrics_cgroup_of(pid_t tid)
{
	struct { struct file_handle fh; uint64_t id; } h;
	char path[32], buf[16384], *p, *nl;
	uint64_t id;
	ssize_t n;
	int fd, mnt_id;

	if (!on || cg_mnt < 0 || tid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (p = buf; p && strncmp(p, "0::", 3); p = (nl = strchr(p, '\n')) ? nl + 1 : NULL)
		;
	if (!p)
		return 0; /* no cgroup v2 line */
	p += 3;
	if ((nl = strchr(p, '\n')))
		*nl = '\0';
	/* "/.." leads out of this cgroup namespace, where the mount cannot
	 * follow: no label rather than the wrong one. */
	if (*p != '/' || strstr(p, "/.."))
		return 0;
	h.fh.handle_bytes = sizeof(uint64_t);
	if (name_to_handle_at(cg_mnt, p[1] ? p + 1 : "", &h.fh, &mnt_id,
			      p[1] ? 0 : AT_EMPTY_PATH) < 0 || h.fh.handle_bytes != sizeof(id))
		return 0;
	memcpy(&id, h.fh.f_handle, sizeof(id));
	gpath_put(id, p);
	return id; /* the kernfs node's: bpf_get_current_cgroup_id()'s */
}

/* Events the gate made, by the kernel's sf_stats key (struct sf_stat):
 * written by one thread at a time (the gate's, and before it starts the
 * main thread's, answering a predecessor's calls), never removed; a key's
 * fields are published by its used flag. The BPF side never sees a call
 * its gate sent up, so these and sf_stats never count one call twice. */
#define GATE_STATS_MAX   4096
#define GATE_STATS_PROBE 64
static struct gate_stat {
	uint32_t used;
	struct sf_stat s;
} gstats[GATE_STATS_MAX];
static uint64_t gstats_left_out;

static bool same_key(const struct sf_stat *a, const struct sf_stat *b)
{
	return a->cgroup == b->cgroup && a->filter_id == b->filter_id && a->nr == b->nr &&
	       a->arch == b->arch && a->ret == b->ret && a->taken == b->taken;
}

void metrics_gate_event(uint64_t cgroup, const struct sf_event *ev)
{
	struct sf_stat k = { .cgroup = cgroup, .filter_id = ev->filter_id, .nr = ev->nr,
			     .arch = ev->arch, .ret = ev->ret, .taken = ev->taken };
	uint64_t h = cgroup;
	size_t i, n;

	if (!on)
		return;
	h = (h ^ ((uint64_t)k.filter_id << 32 | (uint32_t)k.nr)) * 0x9e3779b97f4a7c15ull;
	h = (h ^ ((uint64_t)k.ret << 16 | k.taken) ^ k.arch) * 0x9e3779b97f4a7c15ull;
	for (n = 0, i = (h >> 32) % GATE_STATS_MAX; n < GATE_STATS_PROBE;
	     n++, i = (i + 1) % GATE_STATS_MAX) {
		struct gate_stat *g = &gstats[i];

		if (!__atomic_load_n(&g->used, __ATOMIC_ACQUIRE)) {
			g->s = k;
			__atomic_store_n(&g->used, 1, __ATOMIC_RELEASE);
		} else if (!same_key(&g->s, &k)) {
			continue;
		}
		__atomic_fetch_add(&g->s.count, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_fetch_add(&gstats_left_out, 1, __ATOMIC_RELAXED);
}

/* Whether a cgroup path may stand in a label as it is: printable ASCII
 * without a quote or backslash. Whoever may make a cgroup names it, and one
 * label that is not valid UTF-8 fails the whole scrape: such a path is
 * left out rather than escaped. */
static bool label_safe(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
			return false;
	return true;
}

/* The metric each kind of event is counted in. */
static const char *stat_metric(uint16_t taken)
{
	switch (taken) {
	case SF_TAKEN_KILLED:
	case SF_TAKEN_DENIED:
	case SF_TAKEN_FALLBACK_KILLED:
	case SF_TAKEN_TRAPPED:
		return "sfilter_denials_total";
	case SF_TAKEN_COMPLAIN:
		return "sfilter_complain_events_total";
	case SF_TAKEN_SHADOW:
		return "sfilter_shadow_would_deny_total";
	default:
		return "sfilter_logged_calls_total";
	}
}

/* A counter of the kernel's (sf_stats) or of the gate's. */
struct stat_row {
	struct sf_stat s;
	bool gate;
};

static int by_metric(const void *a, const void *b)
{
	return strcmp(stat_metric(((const struct stat_row *)a)->s.taken),
		      stat_metric(((const struct stat_row *)b)->s.taken));
}

static const char *taken_label(uint16_t taken)
{
	switch (taken) {
	case SF_TAKEN_KILLED: return "killed";
	case SF_TAKEN_DENIED: return "refused";
	case SF_TAKEN_FALLBACK_KILLED: return "fallback-killed";
	case SF_TAKEN_FALLBACK_LOGGED: return "fallback-logged";
	case SF_TAKEN_TRAPPED: return "trapped";
	default: return "logged";
	}
}

/* The kernel's counters and the gate's, as rows: n of them. */
static struct stat_row *stat_rows(size_t *n)
{
	struct sf_stat *k = NULL;
	struct stat_row *rows;
	size_t nk = 0, i;

	if (sf_runtime_stats(sfd.rt, &k, &nk) < 0)
		nk = 0;
	rows = calloc(nk + GATE_STATS_MAX, sizeof(*rows));
	*n = 0;
	for (i = 0; rows && i < nk; i++)
		rows[(*n)++] = (struct stat_row){ .s = k[i] };
	for (i = 0; rows && i < GATE_STATS_MAX; i++) {
		struct stat_row *r;

		if (!__atomic_load_n(&gstats[i].used, __ATOMIC_ACQUIRE))
			continue;
		r = &rows[(*n)++];
		/* The key as published; the count, which the gate's thread
		 * adds to meanwhile, atomically. */
		r->s = (struct sf_stat){ .cgroup = gstats[i].s.cgroup,
					 .filter_id = gstats[i].s.filter_id,
					 .nr = gstats[i].s.nr, .arch = gstats[i].s.arch,
					 .ret = gstats[i].s.ret, .taken = gstats[i].s.taken,
					 .count = LOAD(gstats[i].s.count) };
		r->gate = true;
	}
	free(k);
	if (*n)
		qsort(rows, *n, sizeof(*rows), by_metric);
	return rows;
}

static void stats(FILE *f)
{
	static const struct { const char *name, *help; } m[] = {
		{ "sfilter_complain_events_total", "calls a complain filter would have refused" },
		{ "sfilter_denials_total", "calls refused, trapped or killed, before any event "
		  "budget: by the BPF side (tier tracepoint or lsm) or by sfilterd for a gate "
		  "(tier gate, its cgroup the one of the first task that called through it)" },
		{ "sfilter_logged_calls_total", "calls allowed and logged (LOG, or the log fallback)" },
		{ "sfilter_shadow_would_deny_total", "calls a shadow filter would have decided otherwise" },
	};
	const char *tier = sf_tier_name(sf_runtime_tier(sfd.rt));
	size_t n = 0, i, j;
	struct stat_row *all = stat_rows(&n);

	for (j = 0; j < sizeof(m) / sizeof(m[0]); j++) {
		counter(f, m[j].name, m[j].help);
		for (i = 0; i < n; i++) {
			const struct sf_stat *s = &all[i].s;
			const char *path, *action, *arch;
			char text[300], id[SF_CONTAINER_ID_LEN + 1], *sys;

			if (strcmp(stat_metric(s->taken), m[j].name))
				continue;
			path = s->cgroup ? cg_path(s->cgroup) : "";
			snprintf(text, sizeof(text), "0::%s\n", path);
			if (!*path || !sf_container_id(text, id))
				id[0] = 0;
			arch = s->arch == C2E_AUDIT_ARCH_I386 ? "i386" :
			       (s->nr & C2E_X32_SYSCALL_BIT) ? "x32" : "x86_64";
			sys = seccomp_syscall_resolve_num_arch(
				s->arch == C2E_AUDIT_ARCH_I386 ? SCMP_ARCH_X86 :
				(s->nr & C2E_X32_SYSCALL_BIT) ? SCMP_ARCH_X32 : SCMP_ARCH_X86_64, s->nr);
			action = c2e_action_name(c2e_effective_action(s->ret));
			if (!label_safe(path))
				path = "";
			fprintf(f, "%s{container=\"%.12s\",cgroup=\"%s\",filter=\"%u\","
				"syscall=\"%s\",nr=\"%d\",arch=\"%s\",action=\"%s\",taken=\"%s\","
				"tier=\"%s\"} %llu\n",
				m[j].name, id, path, s->filter_id, sys ? sys : "", s->nr, arch,
				action ? action : "KILL_PROCESS", taken_label(s->taken),
				all[i].gate ? "gate" : tier, (unsigned long long)s->count);
			free(sys);
		}
	}
	free(all);
	counter(f, "sfilter_gate_denials_left_out_total",
		"gated calls refused, trapped or killed and not in sfilter_denials_total: "
		"past the 4096 label sets the daemon keeps (sfilter_gate_calls_total has them)");
	fprintf(f, "sfilter_gate_denials_left_out_total %llu\n",
		(unsigned long long)LOAD(gstats_left_out));
}

static void counter(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
}

static void gauge(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void drops(FILE *f)
{
	struct sf_event_drops *all = NULL;
	uint64_t budget = 0, ring = 0;
	size_t n = 0, i;
	int c;

	if (sf_runtime_event_drops(sfd.rt, &all, &n) == 0) {
		for (i = 0; i < n; i++)
			for (c = 0; c < SF_EV_CLASSES; c++) {
				budget += all[i].budget[c];
				ring += all[i].ring[c];
			}
	}
	free(all);
	counter(f, "sfilter_events_dropped_total",
		"events not logged: over their login user's budget, or no room in the ring buffer");
	fprintf(f, "sfilter_events_dropped_total{reason=\"budget\"} %llu\n",
		(unsigned long long)budget);
	fprintf(f, "sfilter_events_dropped_total{reason=\"ring\"} %llu\n",
		(unsigned long long)ring);
}

static void gate(FILE *f)
{
	gauge(f, "sfilter_gate_listeners", "kernel seccomp listeners (gates) the daemon judges");
	fprintf(f, "sfilter_gate_listeners %llu\n", (unsigned long long)LOAD(g.st.listeners));
	counter(f, "sfilter_gate_calls_total", "calls gates sent up, by the answer they got");
#define A(field, name) fprintf(f, "sfilter_gate_calls_total{answer=\"" name "\"} %llu\n", \
			       (unsigned long long)LOAD(g.st.field))
	A(continued, "continue");
	A(denied, "errno");
	A(trapped, "trap");
	A(killed, "kill");
	A(unjudged, "enosys");
#undef A
	hist_print(f, "sfilter_gate_round_trip_seconds",
		   "gated calls, from the notification's receipt to its answer (the daemon's part)",
		   &gate_took);
}

static int render(void *ctx, char **body, size_t *len)
{
	struct sf_counters k;
	FILE *f;

	(void)ctx;
	f = open_memstream(body, len);
	if (!f)
		return -errno;
	sf_runtime_counters(sfd.rt, &k);
	gauge(f, "sfilter_up", "1 while sfilterd serves with its runtime open");
	fprintf(f, "sfilter_up 1\n");
	gauge(f, "sfilter_info", "the daemon's version and enforcement tier");
	fprintf(f, "sfilter_info{version=\"%s\",tier=\"%s\"} 1\n", SF_VERSION,
		sf_tier_name(sf_runtime_tier(sfd.rt)));
	gauge(f, "sfilter_confined_tasks", "tasks with a filter or an arm, as the kernel counts them");
	fprintf(f, "sfilter_confined_tasks %llu\n", (unsigned long long)k.confined);
	gauge(f, "sfilter_dispatcher_attached", "1 while the sys_enter dispatcher is attached");
	fprintf(f, "sfilter_dispatcher_attached %d\n", LOAD(snap.dispatcher) != 0);
	counter(f, "sfilter_events_logged_total", "events written to the event log");
	fprintf(f, "sfilter_events_logged_total %llu\n", (unsigned long long)LOAD(snap.n_events));
	counter(f, "sfilter_events_folded_total",
		"refused or logged calls counted in a folded event's count, with no event "
		"of their own (sfilterd --repeat-interval)");
	fprintf(f, "sfilter_events_folded_total %llu\n", (unsigned long long)eventagg_folded());
	counter(f, "sfilter_repeat_events_total",
		"events that reported calls no event of their own carried");
	fprintf(f, "sfilter_repeat_events_total %llu\n", (unsigned long long)eventagg_repeats());
	drops(f);
	stats(f);
	metrics_hits_render(f);
	attaches(f);
	counter(f, "sfilter_kernel_failures_total",
		"what the BPF side could not do: fork storage, orphans killed, empty chain slots, cgroup joins");
	fprintf(f, "sfilter_kernel_failures_total{what=\"fork_storage\"} %llu\n",
		(unsigned long long)k.fork_failed);
	fprintf(f, "sfilter_kernel_failures_total{what=\"orphan_killed\"} %llu\n",
		(unsigned long long)k.orphans_killed);
	fprintf(f, "sfilter_kernel_failures_total{what=\"tailcall\"} %llu\n",
		(unsigned long long)k.tailcall_failed);
	fprintf(f, "sfilter_kernel_failures_total{what=\"cgroup_join\"} %llu\n",
		(unsigned long long)k.cg_failed);
	gate(f);
	if (fclose(f))
		return -errno;
	return 0;
}

int metrics_open(const char *addr)
{
	char err[256];
	int r = sf_http_open(addr, &server, err, sizeof(err));

	if (r < 0) {
		diag("%s", err);
		return r;
	}
	cg_mount();
	on = true;
	return 0;
}

void metrics_counted(uint32_t id)
{
	if (on)
		metrics_hits_track(id);
}

void metrics_snapshot(void)
{
	struct sf_lazy_links l;

	if (!server)
		return;
	sf_runtime_lazy_links(sfd.rt, &l);
	__atomic_store_n(&snap.dispatcher, l.dispatcher, __ATOMIC_RELAXED);
	__atomic_store_n(&snap.n_events, sfd.n_events, __ATOMIC_RELAXED);
	metrics_hits_tick(metrics_now_ns() / 1000000);
}

int metrics_start(void)
{
	int r;

	if (!server)
		return 0;
	metrics_snapshot();
	r = sf_http_start(server, render, NULL);
	if (r < 0)
		diag("--metrics: %s", strerror(-r));
	return r;
}

void metrics_stop(void)
{
	if (server)
		sf_http_close(server);
	server = NULL;
	metrics_hits_stop();
}
