"""Data shipped with the package: benchmark prompts."""
