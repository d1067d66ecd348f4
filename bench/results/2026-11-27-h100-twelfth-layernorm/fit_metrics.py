from fit_features import D
import math, itertools
def tau(pred, meas):
    # Kendall tau-b approx via sampling pairs quickly (n ~ 5000: use all pairs with numpy)
    import random
    rnd=random.Random(0); n=len(pred); c=d=0
    sg=lambda x:(x>0)-(x<0)
    for _ in range(60000):
        a=rnd.randrange(n); b=rnd.randrange(n)
        s=sg(pred[a]-pred[b])*sg(meas[a]-meas[b])
        if s>0: c+=1
        elif s<0: d+=1
    return (c-d)/max(1,c+d)
def firstWithin(pred, meas, pct=1.01):
    order=sorted(range(len(pred)), key=lambda i:(pred[i], i))
    best=min(meas)
    for r,i in enumerate(order):
        if meas[i]<=best*pct: return r
