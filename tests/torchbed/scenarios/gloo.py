"""torch.distributed with the gloo backend and two ranks started by mp.spawn: an all_reduce."""
import os, socket
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_main(rank, world, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    if rank == 0:
        print("all_reduce", t.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    with socket.socket() as s:  # a free loopback port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(rank_main, args=(2, port), nprocs=2)
    print("done")
