"""The bottom layer: terms and their ids, time (durations, timestamps, time points), errors, limits.

Everything else imports from here; nothing here imports from another layer.
"""
