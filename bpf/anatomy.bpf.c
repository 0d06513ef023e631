// SPDX-License-Identifier: (MIT OR GPL-2.0)
//
// fslab's latency anatomy (issue 36), aggregated in the kernel.
//
// The kernel here has no kprobes, so everything hangs on tracepoints, whose
// records fslab checks against each event's `format` file before loading
// (src/telemetry/anatomy/formats.rs): a kernel with another layout is
// refused with one line, never misread.
//
// - sched_switch / sched_waking: for each registered worker thread (`tids`,
//   filled by fslab), the time it spent off the CPU, asleep (with the kernel
//   stack it slept in and who woke it) or preempted. Each sleep lands in the
//   thread's slot of `slots`, an mmapped array the worker reads after each
//   operation with plain loads: no system call on the hot path.
// - block_rq_insert / issue / complete: each request's queue (insert ->
//   issue) and device (issue -> complete) time, into log-linear histograms
//   per device and direction (`devhist`, 128 sub-buckets per power of two,
//   so under 1 % error like fslab's own), into 10 ms windows of device
//   activity (`window`, read for a slow operation's span), and into the slot
//   of the worker that submitted it.
// - jbd2 commits and XFS log forces: a ring buffer of events (`events`,
//   4 MiB: 100k events), read at the cell's end (no reader thread: see
//   src/telemetry/anatomy/collect.rs) and joined to slow operations.
//
// Regenerate the object with bpf/build.sh (clang -target bpf); the object is
// checked in so that building fslab needs no C toolchain.

#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#define RING 64
#define MAX_SLOTS 256
#define WINDOW_NS 10000000ULL
#define NWINDOWS 8192
#define SUB_BITS 7

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Offsets of `rwbs` in block_rq_{insert,issue,complete}: they moved when
 * ioprio was added (6.4), so fslab reads them from the format files. */
volatile const __u32 rwbs_insert = 34;
volatile const __u32 rwbs_issue = 34;
volatile const __u32 rwbs_complete = 34;
volatile const __u32 rwbs_bio = 28;
/* --anatomy: the per-device histograms are kept (--explain-slow alone
 * needs only the windows). Set at load. */
volatile const __u32 layers = 1;

/* A waker's stack is taken only for a sleep that has lasted this long when
 * it is woken: a report lists only sleeps of 1 ms or more with their
 * wakers (SHOWN_SLEEP_NS in collect.rs), and sched_waking taking one
 * cost ~1.8 µs a run, more than 5% of a 4 KiB direct read here, whose
 * every operation sleeps once. */
#define WAKER_MIN_NS 500000ULL

/* --explain-slow alone: a sleep's own stack is taken only if it lasted
 * lazy_ns or more, when the sleeper is switched back in (its saved stack is
 * still the one it slept in), by on_switch_btf. 0: on_switch takes every
 * sleep's stack as it leaves the CPU (--anatomy classifies every sleep).
 * Measured here: the eager stack cost ~1.3 µs per sleep, 4 % of a 4 KiB
 * direct read at queue depth 1, whose every operation sleeps once. */
volatile const __u64 lazy_ns = 0;
/* `stack` of a sleep whose frames are in `lazy_stacks` under its seq */
#define LAZY_STACK -2
#define LAZY_DEPTH 48

/* Only the fields read, relocated by BTF at load (CO-RE). */
struct task_struct {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

/* fslab's process: a switch between two other tasks (most of a machine's)
 * costs two field loads, not two hash lookups. 0: no filter. */
volatile const __u32 tgid = 0;

struct sleep {
	__u64 end;
	__u64 dur;
	__s32 stack;
	__u32 waker;
	__s32 waker_stack;
	__u32 state;
	char waker_comm[16];
};

struct slot {
	__u64 seq;
	__u64 off_ns;
	__u64 runq_ns;
	__u64 blk_n;
	__u64 blk_queue_ns;
	__u64 blk_dev_ns;
	__u64 out_ts;
	__s32 out_stack;
	__u32 out_state;
	/* who woke the thread from its current sleep, if it was long: set by
	 * sched_waking (woken last), taken at the switch back in. In the slot,
	 * not a hash map: a switch in costs no lookup. */
	__u32 waker_tid;
	__s32 waker_stack;
	char waker_comm[16];
	__u32 woken;
	__u32 pad[9];
	struct sleep ring[RING];
};

/* An in-flight request, in a direct-mapped table by (device, sector): a
 * plain array entry, without a hash map's bucket lock and allocation.
 * Measured here with a hash map (the kernel's run statistics),
 * block_rq_issue and block_rq_complete ran ~370 ns each; with this array,
 * ~210 and ~270 (both with the statistics' own clock reads). Two
 * in-flight requests on one entry: the later wins, the earlier is counted
 * lost. */
#define NRQ 65536
/* an entry untouched this long is a request whose completion was not seen */
#define RQ_STALE_NS 10000000000ULL

struct rq {
	__u32 dev;
	__u32 slot;
	__u64 sector;
	__u64 insert;
	__u64 issue;
	__u32 dir;
	__u32 pad;
};

struct window {
	__u64 epoch;
	__u64 n;
	__u64 writes;
	__u64 bytes;
	__u64 queue_ns;
	__u64 dev_ns;
	__u64 dev_max;
	__u64 pad;
};

struct histkey {
	__u32 dev;
	__u16 layer; /* 0 queue, 1 device */
	__u16 dir;   /* 0 read, 1 write, 2 other (flush, discard) */
	__u32 bucket;
	__u32 pad;
};

struct event {
	__u64 ts;
	__u32 kind;
	__u32 dev;
	__u32 tid;
	__u32 pid;
	__u32 blocks;
	__u32 handles;
	__u64 lsn;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct slot);
} slots SEC(".maps");

/* Registered threads, direct-mapped by tid: entry tid % NTIDS holds the
 * tid and its slot + 1 (fslab refuses a second tid on an entry). An array
 * lookup is inlined by the verifier; a hash map's cost ~40 ns, and a
 * traced operation looks its thread up four times or more. */
#define NTIDS 65536

struct tidslot {
	__u32 tid;
	__u32 slot;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NTIDS);
	__type(key, __u32);
	__type(value, struct tidslot);
} tids SEC(".maps");

/* A lazily taken stack: entry slot * RING + seq % RING, `seq` the sleep's
 * (a reader checks it: the ring may have moved on). fslab shrinks the map
 * to one entry when no program fills it. */
struct lazy {
	__u64 seq;
	__u64 len;
	__u64 ips[LAZY_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_SLOTS * RING);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct lazy);
} lazy_stacks SEC(".maps");


struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 64 * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NRQ);
	__type(key, __u32);
	__type(value, struct rq);
} rqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NWINDOWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct window);
} windows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct histkey);
	__type(value, __u64);
} devhist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

/* The LBA map: sectors written or read per (device, 100 ms, 1 MiB of the
 * device, class), from block_bio_queue (the submitter's context, so the
 * journal thread is seen as itself). */
#define LBA_SHIFT 11
#define LBA_TIME_NS 100000000ULL

struct lbakey {
	__u32 dev;
	__u32 t;
	__u32 lba;
	__u32 class; /* 0 data write, 1 metadata write, 2 journal/log, 3 read */
};

/* a bio may be hundreds of MiB (large folios): its sectors are kept with
 * the last MiB it reached, and spread over its range in user space */
struct lbaval {
	__u64 sectors;
	__u64 last;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 131072);
	__type(key, struct lbakey);
	__type(value, struct lbaval);
} lbamap SEC(".maps");

/* Lost events and requests, so the report can say what it missed. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline void count_lost(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &what);
	if (n)
		__sync_fetch_and_add(n, 1);
}

struct switch_args {
	__u64 common;
	char prev_comm[16];
	__s32 prev_pid;
	__s32 prev_prio;
	__s64 prev_state;
	char next_comm[16];
	__s32 next_pid;
	__s32 next_prio;
};

struct waking_args {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
	__s32 target_cpu;
};

/* The slot index + 1 of thread `tid`, 0 when it is not traced. */
static __always_inline __u32 slot1_of(__u32 tid)
{
	__u32 k = tid & (NTIDS - 1);
	struct tidslot *t = bpf_map_lookup_elem(&tids, &k);
	return t && t->tid == tid ? t->slot : 0;
}

static __always_inline struct slot *slot_of(__u32 tid, __u32 *index)
{
	__u32 s = slot1_of(tid);
	if (!s)
		return 0;
	s -= 1;
	if (index)
		*index = s;
	return bpf_map_lookup_elem(&slots, &s);
}

/* A tracked thread leaves the CPU in `state` (TASK_REPORT bits, 0 for
 * runnable: preempted or yielded) with the stack `stack`. */
static __always_inline void switched_out(struct slot *sl, __u64 now, __u32 state, __s32 stack)
{
	sl->out_ts = now;
	sl->out_state = state;
	sl->out_stack = stack;
}

/* A tracked thread `next` comes back: its sleep or run-queue wait is
 * recorded (`now` 0: the clock is read only then); `task`, when given, is the sleeper whose stack is taken now if
 * the sleep lasted lazy_ns. */
static __always_inline void switched_in(__u32 next, __u64 now, struct task_struct *task)
{
	__u32 idx = 0;
	struct slot *sl = slot_of(next, &idx);
	if (!sl || !sl->out_ts)
		return;
	if (!now)
		now = bpf_ktime_get_ns();
	__u64 d = now - sl->out_ts;
	sl->out_ts = 0;
	if (!sl->out_state) {
		sl->runq_ns += d;
		return;
	}
	struct sleep *e = &sl->ring[sl->seq & (RING - 1)];
	e->end = now;
	e->dur = d;
	e->stack = sl->out_stack;
	e->state = sl->out_state;
	if (task && lazy_ns && d >= lazy_ns) {
		__u32 k = idx * RING + (__u32)(sl->seq & (RING - 1));
		struct lazy *l = bpf_map_lookup_elem(&lazy_stacks, &k);
		if (l) {
			long n = bpf_get_task_stack(task, l->ips, sizeof(l->ips), 0);
			l->seq = sl->seq;
			l->len = n > 0 ? (__u64)n / 8 : 0;
			if (n > 0)
				e->stack = LAZY_STACK;
		}
	}
	if (sl->woken) {
		e->waker = sl->waker_tid;
		e->waker_stack = sl->waker_stack;
		__builtin_memcpy(e->waker_comm, sl->waker_comm, 16);
		sl->woken = 0;
	} else {
		e->waker = 0;
		e->waker_stack = -1;
		e->waker_comm[0] = 0;
	}
	sl->off_ns += d;
	sl->seq += 1;
}

SEC("tracepoint/sched/sched_switch")
int on_switch(struct switch_args *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct slot *sl = 0;
	if (!tgid || bpf_get_current_pid_tgid() >> 32 == tgid)
		sl = slot_of(ctx->prev_pid, 0);
	if (sl) {
		/* TASK_REPORT bits: 0 means runnable (preempted or yielded) */
		__u32 state = ctx->prev_state & 0xff;
		switched_out(sl, now, state, state ? bpf_get_stackid(ctx, &stacks, 0) : -1);
	}
	switched_in(ctx->next_pid, now, 0);
	return 0;
}

/* The same on the BTF-typed tracepoint: its arguments are the tasks
 * themselves (preempt, prev, next, prev_state since 5.18), so no record is
 * built, another process's switch costs two field loads, and a sleeper's
 * stack can be taken lazily, when it comes back. A kernel without BTF or
 * with another prototype refuses it at load, and fslab falls back to
 * on_switch. */
SEC("tp_btf/sched_switch")
int on_switch_btf(__u64 *ctx)
{
	/* most switches are other tasks': the clock (tens of ns in a VM) is
	 * read only for fslab's threads */
	__u64 now = 0;
	struct task_struct *prev = (struct task_struct *)ctx[1];
	struct task_struct *next = (struct task_struct *)ctx[2];
	struct slot *sl = 0;
	if (!tgid || prev->tgid == tgid)
		sl = slot_of(prev->pid, 0);
	if (sl) {
		now = bpf_ktime_get_ns();
		/* the raw state, as TASK_REPORT bits: a preempted task is
		 * runnable whatever its state; TASK_IDLE (NOLOAD) is idle, not D;
		 * an rtlock wait is D */
		__u32 raw = (__u32)ctx[3];
		__u32 state = raw & 0x7f;
		if (raw & 0x400)
			state = 0x80;
		else if (!state && raw)
			state = 2;
		if (ctx[0] & 1)
			state = 0;
		/* --anatomy: every sleep's stack, now (lazy_ns 0) */
		switched_out(sl, now, state, state && !lazy_ns ? bpf_get_stackid(ctx, &stacks, 0) : -1);
	}
	if (!tgid || next->tgid == tgid)
		switched_in(next->pid, now, next);
	return 0;
}

/* sched_waking runs in the waker's context (sched_wakeup may run on the
 * wakee's CPU), so its task and stack are the waker's. */
static __always_inline void woken(void *ctx, __u32 pid)
{
	struct slot *sl = slot_of(pid, 0);
	if (!sl || !sl->out_ts || !sl->out_state)
		return;
	if (bpf_ktime_get_ns() - sl->out_ts < WAKER_MIN_NS)
		return;
	sl->waker_tid = (__u32)bpf_get_current_pid_tgid();
	sl->waker_stack = bpf_get_stackid(ctx, &stacks, 0);
	bpf_get_current_comm(sl->waker_comm, sizeof(sl->waker_comm));
	sl->woken = 1;
}

SEC("tracepoint/sched/sched_waking")
int on_waking(struct waking_args *ctx)
{
	woken(ctx, ctx->pid);
	return 0;
}

/* The same on the BTF-typed tracepoint, its argument the task: no record
 * is built, and another process's wake-up costs one field load. */
SEC("tp_btf/sched_waking")
int on_waking_btf(__u64 *ctx)
{
	struct task_struct *p = (struct task_struct *)ctx[0];
	if (!tgid || p->tgid == tgid)
		woken(ctx, p->pid);
	return 0;
}

struct blk_args {
	__u64 common;
	__u32 dev;
	__u32 pad;
	__u64 sector;
	__u32 nr_sector;
	__u32 bytes_or_error;
};

static __always_inline __u32 dir_of(void *ctx, __u32 off)
{
	char rwbs[4] = {};
	bpf_probe_read_kernel(rwbs, sizeof(rwbs), (char *)ctx + (off & 0xff));
	/* a leading F is a preflush: the direction follows */
	char c = rwbs[0] == 'F' ? rwbs[1] : rwbs[0];
	return c == 'R' ? 0 : c == 'W' ? 1 : 2;
}

static __always_inline __u32 slot_index_of_current(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	if (tgid && id >> 32 != tgid)
		return 0;
	return slot1_of((__u32)id);
}

static __always_inline struct rq *rq_of(__u32 dev, __u64 sector)
{
	/* Fibonacci hashing: a sequential stream's sectors spread too */
	__u32 i = (__u32)(((sector ^ ((__u64)dev << 40)) * 0x9E3779B97F4A7C15ULL) >> 48);
	return bpf_map_lookup_elem(&rqs, &i);
}

static __always_inline int rq_is(struct rq *e, __u32 dev, __u64 sector)
{
	return e->dev == dev && e->sector == sector;
}

/* A request seen first at its insert or its issue takes the entry; another
 * request in flight on it is overwritten, lost. */
static __always_inline void rq_start(struct rq *e, __u32 dev, __u64 sector, __u64 insert, __u64 issue, __u32 dir)
{
	__u64 last = e->issue ? e->issue : e->insert;
	__u64 now = insert ? insert : issue;
	if (last && now - last < RQ_STALE_NS && !rq_is(e, dev, sector))
		count_lost(0);
	e->dev = dev;
	e->sector = sector;
	e->insert = insert;
	e->issue = issue;
	e->slot = slot_index_of_current();
	e->dir = dir;
}

static __always_inline void rq_inserted(__u32 dev, __u64 sector, __u32 dir)
{
	struct rq *e = rq_of(dev, sector);
	if (e)
		rq_start(e, dev, sector, bpf_ktime_get_ns(), 0, dir);
}

static __always_inline void rq_issued(__u32 dev, __u64 sector, __u32 dir)
{
	__u64 now = bpf_ktime_get_ns();
	struct rq *e = rq_of(dev, sector);
	if (!e)
		return;
	if (rq_is(e, dev, sector) && (e->insert || e->issue)) {
		/* inserted before (or requeued): its issue */
		e->issue = now;
		if (!e->slot)
			e->slot = slot_index_of_current();
		return;
	}
	rq_start(e, dev, sector, 0, now, dir);
}

SEC("tracepoint/block/block_rq_insert")
int on_insert(struct blk_args *ctx)
{
	rq_inserted(ctx->dev, ctx->sector, dir_of(ctx, rwbs_insert));
	return 0;
}

SEC("tracepoint/block/block_rq_issue")
int on_issue(struct blk_args *ctx)
{
	rq_issued(ctx->dev, ctx->sector, dir_of(ctx, rwbs_issue));
	return 0;
}

/* floor(log2(v)) for v > 0, without loops */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

/* Log-linear: values under 2^SUB_BITS exactly, above that 2^SUB_BITS
 * sub-buckets per power of two (relative width 1/128). */
static __always_inline __u32 bucket_of(__u64 v)
{
	if (v < (1ULL << SUB_BITS))
		return (__u32)v;
	__u32 e = log2_u64(v);
	__u32 sub = (__u32)(v >> (e - SUB_BITS)) & ((1U << SUB_BITS) - 1);
	return ((e - SUB_BITS + 1) << SUB_BITS) | sub;
}

static __always_inline void hist_add(__u32 dev, __u16 layer, __u16 dir, __u64 v)
{
	struct histkey k = { .dev = dev, .layer = layer, .dir = dir, .bucket = bucket_of(v) };
	__u64 one = 1;
	__u64 *n = bpf_map_lookup_elem(&devhist, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
	else if (bpf_map_update_elem(&devhist, &k, &one, BPF_NOEXIST)) {
		n = bpf_map_lookup_elem(&devhist, &k);
		if (n)
			__sync_fetch_and_add(n, 1);
		else
			count_lost(1);
	}
}

static __always_inline void window_add(__u64 now, __u32 dir, __u64 bytes, __u64 q, __u64 d)
{
	__u64 epoch = now / WINDOW_NS;
	__u32 i = (__u32)(epoch % NWINDOWS);
	struct window *w = bpf_map_lookup_elem(&windows, &i);
	if (!w)
		return;
	__u64 old = w->epoch;
	if (old != epoch) {
		/* the first completion of a new window clears it; a racing
		 * completion on another CPU may land before the clear and be lost
		 * (rare: only at a window's first instant) */
		if (__sync_val_compare_and_swap(&w->epoch, old, epoch) == old) {
			w->n = 0;
			w->writes = 0;
			w->bytes = 0;
			w->queue_ns = 0;
			w->dev_ns = 0;
			w->dev_max = 0;
		}
	}
	__sync_fetch_and_add(&w->n, 1);
	if (dir == 1)
		__sync_fetch_and_add(&w->writes, 1);
	__sync_fetch_and_add(&w->bytes, bytes);
	__sync_fetch_and_add(&w->queue_ns, q);
	__sync_fetch_and_add(&w->dev_ns, d);
	if (d > w->dev_max)
		w->dev_max = d;
}

static __always_inline void rq_completed(__u32 dev, __u64 sector, __u64 bytes)
{
	__u64 now = bpf_ktime_get_ns();
	struct rq *v = rq_of(dev, sector);
	if (!v || !rq_is(v, dev, sector) || !v->issue) {
		if (v && rq_is(v, dev, sector))
			v->insert = 0;
		return;
	}
	__u64 q = v->insert ? v->issue - v->insert : 0;
	__u64 d = now - v->issue;
	__u32 dir = v->dir;
	__u32 slot = v->slot;
	int inserted = v->insert != 0;
	/* done: the entry is free (a partial completion's rest is not timed) */
	v->insert = 0;
	v->issue = 0;
	if (slot) {
		__u32 i = slot - 1;
		struct slot *sl = bpf_map_lookup_elem(&slots, &i);
		if (sl) {
			__sync_fetch_and_add(&sl->blk_n, 1);
			__sync_fetch_and_add(&sl->blk_queue_ns, q);
			__sync_fetch_and_add(&sl->blk_dev_ns, d);
		}
	}
	if (layers) {
		if (inserted)
			hist_add(dev, 0, dir, q);
		hist_add(dev, 1, dir, d);
	}
	window_add(now, dir, bytes, q, d);
}

SEC("tracepoint/block/block_rq_complete")
int on_complete(struct blk_args *ctx)
{
	rq_completed(ctx->dev, ctx->sector, (__u64)ctx->nr_sector * 512);
	return 0;
}

/* The same three on the BTF-typed tracepoints, their argument the request:
 * no record is built (its rwbs string, its command bytes). The dev and
 * sector are the tracepoints' (the disk's dev_t, the
 * request's start), so a request is matched whichever program saw it. */
struct gendisk {
	int major;
	int first_minor;
} __attribute__((preserve_access_index));

struct request_queue {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

struct request {
	struct request_queue *q;
	unsigned int cmd_flags;
	__u64 __sector;
} __attribute__((preserve_access_index));

static __always_inline __u32 rq_dev(struct request *rq)
{
	struct gendisk *disk = rq->q->disk;
	return disk ? ((__u32)disk->major << 20) | (__u32)disk->first_minor : 0;
}

/* the tracepoints' sector: 0 for a passthrough (REQ_OP_DRV_IN, _OUT) */
static __always_inline __u64 rq_sector(struct request *rq)
{
	__u32 op = rq->cmd_flags & 0xff;
	return op == 34 || op == 35 ? 0 : rq->__sector;
}

/* REQ_OP_READ 0, REQ_OP_WRITE 1 (a preflush write too), the rest other */
static __always_inline __u32 rq_dir(struct request *rq)
{
	__u32 op = rq->cmd_flags & 0xff;
	return op < 2 ? op : 2;
}

SEC("tp_btf/block_rq_insert")
int on_insert_btf(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	rq_inserted(rq_dev(rq), rq_sector(rq), rq_dir(rq));
	return 0;
}

SEC("tp_btf/block_rq_issue")
int on_issue_btf(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	rq_issued(rq_dev(rq), rq_sector(rq), rq_dir(rq));
	return 0;
}

/* block_rq_complete(rq, error, nr_bytes) */
SEC("tp_btf/block_rq_complete")
int on_complete_btf(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	rq_completed(rq_dev(rq), rq_sector(rq), (__u32)ctx[2] & ~511U);
	return 0;
}

SEC("tracepoint/block/block_bio_queue")
int on_bio_queue(struct blk_args *ctx)
{
	char rwbs[6] = {};
	bpf_probe_read_kernel(rwbs, sizeof(rwbs), (char *)ctx + (rwbs_bio & 0xff));
	__u32 i = rwbs[0] == 'F' ? 1 : 0;
	char dir = i ? rwbs[1] : rwbs[0];
	if (dir != 'W' && dir != 'R')
		return 0;
	__u32 class = 0;
	if (dir == 'R') {
		class = 3;
	} else {
		char comm[8] = {};
		bpf_get_current_comm(comm, sizeof(comm));
		/* constant indexes: the verifier refuses a variable one here */
		int fua = i ? rwbs[2] == 'F' : rwbs[1] == 'F';
		int meta = 0;
#pragma unroll
		for (int j = 1; j < 6; j++)
			meta |= rwbs[j] == 'M';
		/* the journal thread's writes, and preflush or FUA writes (a
		 * log's commit records: XFS writes its log so) */
		if ((comm[0] == 'j' && comm[1] == 'b' && comm[2] == 'd' && comm[3] == '2' && comm[4] == '/') || i || fua)
			class = 2;
		else if (meta)
			class = 1;
	}
	struct lbakey k = {
		.dev = ctx->dev,
		.t = (__u32)(bpf_ktime_get_ns() / LBA_TIME_NS),
		.lba = (__u32)(ctx->sector >> LBA_SHIFT),
		.class = class,
	};
	__u64 n = ctx->nr_sector;
	__u64 last = (ctx->sector + (n ? n - 1 : 0)) >> LBA_SHIFT;
	struct lbaval *v = bpf_map_lookup_elem(&lbamap, &k);
	if (v) {
		__sync_fetch_and_add(&v->sectors, n);
		if (last > v->last)
			v->last = last;
	} else {
		struct lbaval nv = { .sectors = n, .last = last };
		if (bpf_map_update_elem(&lbamap, &k, &nv, BPF_NOEXIST))
			count_lost(3);
	}
	return 0;
}

/* journal and log events */
enum {
	EV_JBD2_START = 1,
	EV_JBD2_LOCKING,
	EV_JBD2_FLUSHING,
	EV_JBD2_LOGGING,
	EV_JBD2_END,
	EV_JBD2_STATS,
	EV_XFS_FORCE,
};

struct jbd2_args {
	__u64 common;
	__u32 dev;
	__u8 sync_commit;
	__u8 pad[3];
	__u32 transaction;
};

struct jbd2_stats_args {
	__u64 common;
	__u32 dev;
	__u32 tid;
	__u64 times[6];
	__u32 handle_count;
	__u32 blocks;
	__u32 blocks_logged;
};

struct xfs_force_args {
	__u64 common;
	__u32 dev;
	__u32 pad;
	__s64 lsn;
	__u64 caller_ip;
};

static __always_inline void emit(__u32 kind, __u32 dev, __u32 tid, __u32 blocks, __u32 handles, __u64 lsn)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost(2);
		return;
	}
	e->ts = bpf_ktime_get_ns();
	e->kind = kind;
	e->dev = dev;
	e->tid = tid;
	e->pid = (__u32)bpf_get_current_pid_tgid();
	e->blocks = blocks;
	e->handles = handles;
	e->lsn = lsn;
	bpf_ringbuf_submit(e, 0);
}

SEC("tracepoint/jbd2/jbd2_start_commit")
int on_jbd2_start(struct jbd2_args *ctx) { emit(EV_JBD2_START, ctx->dev, ctx->transaction, 0, 0, 0); return 0; }
SEC("tracepoint/jbd2/jbd2_commit_locking")
int on_jbd2_locking(struct jbd2_args *ctx) { emit(EV_JBD2_LOCKING, ctx->dev, ctx->transaction, 0, 0, 0); return 0; }
SEC("tracepoint/jbd2/jbd2_commit_flushing")
int on_jbd2_flushing(struct jbd2_args *ctx) { emit(EV_JBD2_FLUSHING, ctx->dev, ctx->transaction, 0, 0, 0); return 0; }
SEC("tracepoint/jbd2/jbd2_commit_logging")
int on_jbd2_logging(struct jbd2_args *ctx) { emit(EV_JBD2_LOGGING, ctx->dev, ctx->transaction, 0, 0, 0); return 0; }
SEC("tracepoint/jbd2/jbd2_end_commit")
int on_jbd2_end(struct jbd2_args *ctx) { emit(EV_JBD2_END, ctx->dev, ctx->transaction, 0, 0, 0); return 0; }
SEC("tracepoint/jbd2/jbd2_run_stats")
int on_jbd2_stats(struct jbd2_stats_args *ctx)
{
	emit(EV_JBD2_STATS, ctx->dev, ctx->tid, ctx->blocks, ctx->handle_count, 0);
	return 0;
}
SEC("tracepoint/xfs/xfs_log_force")
int on_xfs_force(struct xfs_force_args *ctx)
{
	emit(EV_XFS_FORCE, ctx->dev, 0, 0, 0, (__u64)ctx->lsn);
	return 0;
}
