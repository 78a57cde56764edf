"""More than one device: meshes, processes and collectives.

- `meshes`: a mesh of real GPUs, or of simulated CPU devices.
- `distributed`: several processes on one machine, as on a cluster.
- `sendrecv`: point-to-point transfers and the deadlocks they can make.
- `collective_cost`: how long a collective takes (the latency-bandwidth,
  alpha-beta, model), fitted to measurements.
"""
