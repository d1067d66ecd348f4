from fit_features import D
from fit_metrics import tau, firstWithin
import math
BW=3.35e12
def model(f,p,need,share,exch,pfc,spill,runloss=0.035, extra_eff=0.93):
    reads=134e6; writes=134e6
    passes=3 - (1 if p["ONLINE"]>=1 else 0)
    extra=0 if f["held"] else (passes-1)*reads*share
    hid=min(1.0, f["inflight"]/need)
    run=min(p["LANES"],32)*p["VEC"]*2
    runs=max(0.5,1-runloss*max(0,math.log2(1024/run)))
    t=(reads+writes+extra)/(BW*extra_eff*hid*runs)*1e6
    ex = 1 if p["ONLINE"]==2 else 2
    rowsRes=f["blocks"]*p["ROWS"]*132
    waves=8192/max(rowsRes,1)
    t += exch*ex*waves
    if f["held"] and p["PREFETCH"]>0: t -= pfc*waves
    t *= 1+f["spill"]/spill
    return t
