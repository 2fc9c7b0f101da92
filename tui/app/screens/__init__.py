"""Screens: the main monitor, the full-screen log and the help."""
