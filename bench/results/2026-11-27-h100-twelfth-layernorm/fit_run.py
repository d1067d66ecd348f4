from fit_model import model, D
from fit_metrics import tau, firstWithin
meas=[us for f,us,p in D]
ranks=sorted(range(len(D)),key=lambda i:meas[i])
for need in (16e3, 31e3):
  for exch in (0.05,0.1,0.2):
    for pfc in (0.02,0.05):
      pred=[model(f,p,need,0.5,exch,pfc,600) for f,us,p in D]
      o=sorted(range(len(D)),key=lambda i:pred[i])
      print(need,exch,pfc,"tau %.3f"%tau(pred,meas),"first1%",firstWithin(pred,meas),"rank of best 3",[o.index(i) for i in ranks[:3]], "top meas %.1f"%meas[o[0]])
