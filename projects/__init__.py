"""Projects and who works on them: Project, Membership, roles, presets; access.py decides who
may do what."""
