/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Part of sfilter.bpf.c, included once at its place there: one BPF object
 * holds every program and map, so this is not a header for anyone else.
 * Whose budget an event is charged to, the budgets themselves, repeats
 * folded under their key, and the charge user space makes for the events
 * it makes itself.
 */
#ifndef SF_EVENTS_BPF_H
#define SF_EVENTS_BPF_H

/* Whose budget a task's events are charged to: the login user. A task in
 * the initial user namespace is its real uid; a task in a user namespace
 * is the uid that created the outermost one below the initial namespace
 * (create_user_ns() records the creator's euid as owner, and a user's
 * nested namespaces and subuids all hang below the one it made). */
static __always_inline __u32 account_of(struct task_struct *t)
{
	const struct cred *cred = BPF_CORE_READ(t, real_cred);
	struct user_namespace *ns = BPF_CORE_READ(cred, user_ns);
	int i;

	if (BPF_CORE_READ(ns, level) <= 0)
		return BPF_CORE_READ(cred, uid.val);
	for (i = 0; i < SF_USERNS_MAX_LEVEL && BPF_CORE_READ(ns, level) > 1; i++)
		ns = BPF_CORE_READ(ns, parent);
	return BPF_CORE_READ(ns, owner.val);
}

/* Who a syscall's events are charged to: the account and its entry (NULL
 * when none could be had: then the events go unbudgeted). */
struct who {
	__u32 account;
	struct sf_acct *a;
};

static __always_inline void who_of(struct task_struct *t, struct who *w)
{
	struct sf_acct zero = {};

	w->account = account_of(t);
	w->a = bpf_map_lookup_elem(&sf_accounts, &w->account);
	if (w->a)
		return;
	bpf_map_update_elem(&sf_accounts, &w->account, &zero, BPF_NOEXIST);
	w->a = bpf_map_lookup_elem(&sf_accounts, &w->account);
}

/* One event of a class against its budget (the generic cell rate
 * algorithm): tat is when the budget would be whole again. Concurrent
 * events of one account on several CPUs may each take the last event's
 * room: the budget is exceeded by at most one event per CPU. */
static __always_inline bool budget_take(__u64 *tat)
{
	__u64 interval = sf_ev_interval_ns, window = sf_ev_window_ns, now, at;

	if (!interval)
		return true;
	now = bpf_ktime_get_ns();
	at = *tat;
	if (at < now) {
		/* Idle since: the whole budget is there. */
		at = now;
		*tat = now;
	}
	if (at + interval - now > window)
		return false;
	__sync_fetch_and_add(tat, interval);
	return true;
}

enum admit { ADMIT_YES, ADMIT_OVER_BUDGET, ADMIT_RING_FULL };

/* Whether an event may go to the ring buffer: within its account's
 * budget for its class, and while the ring holds no more than its kind may
 * fill (SF_EVENTS_LOGGED_MAX, SF_EVENTS_DENIED_MAX): what is above stays
 * for denials and kills, and the last of it for kills alone. A drop is
 * counted for the account and in all. */
static __always_inline enum admit event_admit(struct who *w, __u16 taken)
{
	__u32 cls = SF_EV_CLASS(taken);
	struct sf_acct *a = w->a;
	__u64 fill = 0;

	if (a && !budget_take(&a->tat[cls & 1])) {
		__sync_fetch_and_add(&a->budget_dropped[cls & 1], 1);
		__sync_fetch_and_add(&sf_events_dropped, 1);
		return ADMIT_OVER_BUDGET;
	}
	if (cls == SF_EV_LOGGED)
		fill = SF_EVENTS_LOGGED_MAX;
	else if (taken == SF_TAKEN_DENIED)
		fill = SF_EVENTS_DENIED_MAX;
	if (fill && bpf_ringbuf_query(&sf_events, BPF_RB_AVAIL_DATA) > fill) {
		if (a)
			__sync_fetch_and_add(&a->ring_dropped[cls & 1], 1);
		__sync_fetch_and_add(&sf_events_dropped, 1);
		return ADMIT_RING_FULL;
	}
	return ADMIT_YES;
}

static __always_inline bool event_admitted(struct who *w, __u16 taken)
{
	return event_admit(w, taken) == ADMIT_YES;
}

/* n events sfilterd made, charged to their account's budget at once
 * (struct sf_charge): as many as budget_take() would admit one by one.
 * Returns how many fit; all of them while there is no budget, or no
 * entry for the account could be had (as for the kernel's own events). */
SEC("syscall")
int sf_charge(struct sf_charge *c)
{
	__u64 interval = sf_ev_interval_ns, window = sf_ev_window_ns, now, at, room;
	__u32 account = c->account, cls = c->cls & 1, n = c->n, k;
	struct sf_acct zero = {}, *a;

	if (!interval)
		return n;
	a = bpf_map_lookup_elem(&sf_accounts, &account);
	if (!a) {
		bpf_map_update_elem(&sf_accounts, &account, &zero, BPF_NOEXIST);
		a = bpf_map_lookup_elem(&sf_accounts, &account);
	}
	if (!a)
		return n;
	now = bpf_ktime_get_ns();
	at = a->tat[cls];
	if (at < now) {
		at = now;
		a->tat[cls] = now;
	}
	/* The j-th (from 0) fits while at + (j + 1) * interval - now <= window. */
	room = at > now + window ? 0 : (now + window - at) / interval;
	k = room < n ? (__u32)room : n;
	if (k)
		__sync_fetch_and_add(&a->tat[cls], (__u64)k * interval);
	if (k < n && c->drop) {
		__sync_fetch_and_add(&a->budget_dropped[cls], n - k);
		__sync_fetch_and_add(&sf_events_dropped, n - k);
	}
	return k;
}

/* Whether a call makes an event (bpf/sfilter.h, struct sf_agg_key): false
 * when it only counts or its event is not admitted (event_admitted());
 * true when it makes one, which then carries *total and *first (0 and 0:
 * not folded, as when there is no entry to be had). Of the calls after an
 * interval, the one that moves next_ns on (compare-and-swap) makes the
 * event; the others meanwhile only count. A key is made only for a call
 * within its account's budget: sf_agg is shared, and an account past its
 * budget must not evict other accounts' keys (and the calls they hold
 * that no event carried yet) faster than its budget lets it make events.
 * One whose event the full ring refused is made all the same: else every
 * call of an account within its budget would be lost while another
 * account's events fill the ring. */
struct agg_what {
	__u32 ret, filter_id;
	__u16 flags, taken, err;
	__u8 sig;
};

static __always_inline bool agg_admit(struct task_struct *t, struct who *w, long id,
				      __u32 arch, const struct agg_what *a,
				      __u64 *total, __u64 *first)
{
	__u64 interval = sf_agg_interval_ns, now, next;
	struct sf_agg_key k = {};
	struct sf_agg_val *v;

	*total = 0;
	*first = 0;
	if (!interval || !SF_AGG_FOLDS(a->taken))
		return event_admitted(w, a->taken);
	k.start_ns = BPF_CORE_READ(t, group_leader, start_boottime);
	k.tgid = t->tgid;
	k.filter_id = a->filter_id;
	k.nr = (__s32)id;
	k.arch = arch;
	k.ret = a->ret;
	k.taken = a->taken;
	now = bpf_ktime_get_ns();
	v = bpf_map_lookup_elem(&sf_agg, &k);
	if (!v) {
		struct sf_agg_val nv = {};
		/* Within its budget but the ring full (another account's
		 * events in it): the key is made all the same, so that this
		 * call and the next ones are counted, and the walk's repeat
		 * event carries them. */
		enum admit ad = event_admit(w, a->taken);

		if (ad == ADMIT_OVER_BUDGET)
			return false;

		nv.next_ns = now + interval;
		nv.total = 1;
		nv.first_ns = now;
		nv.uid = (__u32)bpf_get_current_uid_gid();
		nv.account = w->account;
		nv.flags = a->flags;
		nv.tier = sf_tier;
		nv.err = a->err;
		nv.signal = a->sig;
		bpf_get_current_comm(nv.comm, sizeof(nv.comm));
		if (!bpf_map_update_elem(&sf_agg, &k, &nv, BPF_NOEXIST)) {
			if (ad != ADMIT_YES)
				return false;
			*total = 1;
			*first = now;
			return true;
		}
		/* Another CPU made it first: this admitted event is its
		 * key's, or stands for itself. */
		v = bpf_map_lookup_elem(&sf_agg, &k);
		if (!v)
			return ad == ADMIT_YES;
		*total = __sync_add_and_fetch(&v->total, 1);
		*first = v->first_ns;
		return ad == ADMIT_YES;
	}
	*total = __sync_add_and_fetch(&v->total, 1);
	*first = v->first_ns;
	next = v->next_ns;
	if (now < next ||
	    __sync_val_compare_and_swap(&v->next_ns, next, now + interval) != next) {
		__sync_fetch_and_add(&sf_agg_folded, 1);
		return false;
	}
	return event_admitted(w, a->taken);
}

#endif /* SF_EVENTS_BPF_H */
