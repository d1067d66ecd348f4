import json, math, collections
import gzip, os
rs=[json.loads(l) for l in gzip.open(os.path.join(os.path.dirname(__file__), "U-tuning-layernorm-8192x8192.jsonl.gz"), "rt")]
rs=[r for r in rs if r.get("status")=="ok"]
def feats(r):
    p=r["point"]; x=r["extra"]
    threads=p["ROWS"]*p["LANES"]; vu=p["VEC"]*p["UNROLL"]
    chunks=math.ceil(8192/(p["LANES"]*vu))
    written=chunks<=4
    held=written and p["HOLD"]==1
    regs=x["registers"]; smem=x["shared_bytes"]
    regsAlloc=math.ceil(regs/8)*8
    warps=math.ceil(threads/32)
    byReg=65536//(regsAlloc*warps*32) if regs else 32
    blocks=min(32, 64//warps, byReg, int(228*1024//(smem+1024)))
    if p["MIN_BLOCKS"]: blocks=max(blocks, 0)
    inflight=blocks*threads*vu*2*(chunks if written else 1)
    return dict(threads=threads,vu=vu,chunks=chunks,written=written,held=held,regs=regs,blocks=blocks,inflight=inflight,
                rowsPerSm=blocks*p["ROWS"], spill=x.get("spill_bytes",0), online=p["ONLINE"], pf=p["PREFETCH"], lanes=p["LANES"], rows=p["ROWS"])
D=[(feats(r),r["us"],r["point"]) for r in rs]
if __name__=="__main__":
    g=collections.defaultdict(list)
    for f,us,p in D:
        g[(f["held"],f["written"],int(math.log2(max(f["inflight"],1)//1024+1)))].append(us)
    for k in sorted(g): print(k, len(g[k]), "min %.1f med %.1f"%(min(g[k]), sorted(g[k])[len(g[k])//2]))
