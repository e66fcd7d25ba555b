import csv,os,sys,glob
O=os.environ['OUT']; res={}
for f in glob.glob(O+'/ab_*.csv'):
  _,b,p,r=os.path.basename(f)[:-4].split('_')
  for x in csv.DictReader(open(f)):
    res.setdefault((p,x['uplo'],int(x['n']),int(x['variant_id'])),{}).setdefault(b,[]).append(float(x['ours_tbs']))
bins=sys.argv[1].split(',')
for k,v in sorted(res.items()):
  print(*k, *['%s %s'%(b,' '.join('%.3f'%t for t in v.get(b,[]))) for b in bins])
