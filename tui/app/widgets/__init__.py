"""Widgets of the monitor: header, rank panels and grid, failure view, badges."""
