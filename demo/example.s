; An x86_64 allowlist: getpid, write, exit_group; ERRNO(1) for the rest.
	ld arch
	jeq #0xc000003e, good_arch, kill
good_arch:
	ld nr
	jeq #39, allow, next1		; getpid
next1:	jeq #1, allow, next2		; write
next2:	jeq #231, allow, deny		; exit_group
deny:	ret ERRNO(1)
allow:	ret ALLOW
kill:	ret KILL_PROCESS
