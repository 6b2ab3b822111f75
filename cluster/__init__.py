"""societas.cluster: distribution and operations, one room per job.

cli/ the `societas` command; ray/ the only modules that import Ray; loop/ the Ray-free tick
loop and its groups; experiments/ arms, branches, interviews, estimates; observe/ metrics and
run folders; report/ pages and exports. At the top: `Society`, launching, preflight, the
`cluster:` config, checkpoints.
"""
