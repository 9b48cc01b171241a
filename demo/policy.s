; demo/policy.s: the demo's built-in default policy, an x86_64 allowlist
; for /bin/sh -c "echo ...; ls ..." started by sfrun (dash, bash or
; busybox ash). Anything else, mkdir(2) among it, kills the process;
; another arch is killed too.
	ld arch
	jeq #AUDIT_ARCH_X86_64, +0, kill
	ld nr
	; sfrun's own attach (it is confined from its first attach on)
	jeq #__NR_socket, allow, +0
	jeq #__NR_connect, allow, +0
	jeq #__NR_sendmsg, allow, +0
	jeq #__NR_recvfrom, allow, +0
	jeq #__NR_recvmsg, allow, +0
	jeq #__NR_gettid, allow, +0
	; the dynamic loader, libc start-up and exit
	jeq #__NR_execve, allow, +0
	jeq #__NR_brk, allow, +0
	jeq #__NR_mmap, allow, +0
	jeq #__NR_munmap, allow, +0
	jeq #__NR_mprotect, allow, +0
	jeq #__NR_arch_prctl, allow, +0
	jeq #__NR_set_tid_address, allow, +0
	jeq #__NR_set_robust_list, allow, +0
	jeq #__NR_rseq, allow, +0
	jeq #__NR_prlimit64, allow, +0
	jeq #__NR_getrandom, allow, +0
	jeq #__NR_access, allow, +0
	jeq #__NR_faccessat2, allow, +0
	jeq #__NR_exit_group, allow, +0
	jeq #__NR_exit, allow, +0
	; files, directories and terminals
	jeq #__NR_openat, allow, +0
	jeq #__NR_open, allow, +0
	jeq #__NR_close, allow, +0
	jeq #__NR_read, allow, +0
	jeq #__NR_write, allow, +0
	jeq #__NR_pread64, allow, +0
	jeq #__NR_lseek, allow, +0
	jeq #__NR_fstat, allow, +0
	jeq #__NR_stat, allow, +0
	jeq #__NR_lstat, allow, +0
	jeq #__NR_newfstatat, allow, +0
	jeq #__NR_statx, allow, +0
	jeq #__NR_getdents64, allow, +0
	jeq #__NR_ioctl, allow, +0
	jeq #__NR_fcntl, allow, +0
	jeq #__NR_dup2, allow, +0
	jeq #__NR_getcwd, allow, +0
	jeq #__NR_readlink, allow, +0
	jeq #__NR_getxattr, allow, +0
	jeq #__NR_lgetxattr, allow, +0
	jeq #__NR_statfs, allow, +0
	; the shell: signals, children, identity
	jeq #__NR_rt_sigaction, allow, +0
	jeq #__NR_rt_sigprocmask, allow, +0
	jeq #__NR_rt_sigreturn, allow, +0
	jeq #__NR_clone, allow, +0
	jeq #__NR_clone3, allow, +0
	jeq #__NR_vfork, allow, +0
	jeq #__NR_wait4, allow, +0
	jeq #__NR_getpid, allow, +0
	jeq #__NR_getppid, allow, +0
	jeq #__NR_getuid, allow, +0
	jeq #__NR_geteuid, allow, +0
	jeq #__NR_getgid, allow, +0
	jeq #__NR_getegid, allow, +0
	jeq #__NR_uname, allow, +0
	jeq #__NR_futex, allow, +0
	jeq #__NR_nanosleep, allow, +0
	jeq #__NR_clock_nanosleep, allow, +0
	jeq #__NR_clock_gettime, allow, +0
	jeq #__NR_sched_getaffinity, allow, +0
	; busybox (/bin/sh in the test guest) renames itself after its applet
	jeq #__NR_prctl, allow, +0
kill:	ret KILL_PROCESS
allow:	ret ALLOW
