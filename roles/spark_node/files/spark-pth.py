# Run by the drivers' Python environment with the release's directory: prints, one labelled line
# each, the environment's site-packages directory and the two lines of its spark-release.pth, the
# release's pyspark and its newest py4j (kafkaform.plans.spark_node.pth_files reads them).
import glob
import sys
import sysconfig

home = sys.argv[1]
py4j = sorted(glob.glob(home + "/python/lib/py4j-*-src.zip"))
print("site", sysconfig.get_paths()["purelib"])
print("pyspark", home + "/python/lib/pyspark.zip")
print("py4j", py4j[-1] if py4j else "")
