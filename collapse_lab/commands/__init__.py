"""CLI commands beyond ``train``; each module adds its commands to the group."""
