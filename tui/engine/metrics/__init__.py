"""The engine's own serving metrics (Prometheus ``/metrics``): plain samples read by the I/O
layer, one reading per scrape, windowed rates and quantiles, and the alarms raised on them."""
