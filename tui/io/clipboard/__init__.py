"""Copying text for the user where a terminal escape cannot: tmux's paste buffer."""
