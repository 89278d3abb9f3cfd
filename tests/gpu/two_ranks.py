# Two NCCL ranks on one GPU (no GPU selected per rank): NCCL refuses ("Duplicate GPU detected").
# tests/gpu/validate.sh runs it under the shim: same outcome, and the report raises no false alarm.
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
def main(rank):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533")
    dist.init_process_group("nccl", rank=rank, world_size=2, device_id=torch.device("cuda", 0))
    x = torch.ones(4, device="cuda")
    try:
        dist.all_reduce(x); torch.cuda.synchronize(); print("rank", rank, "sum", x[0].item(), flush=True)
    except Exception as e:
        print("rank", rank, "error:", str(e).splitlines()[0][:300], flush=True)
    dist.destroy_process_group()
if __name__ == "__main__":
    mp.spawn(main, nprocs=2)
