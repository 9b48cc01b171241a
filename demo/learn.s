; demo/learn.s: for complain mode only. Every syscall is a would-be kill,
; so every syscall the process makes is logged (nothing is enforced in
; complain mode); sfctl policy-from-log turns the log into an allowlist.
	ret KILL_PROCESS
