# The fixtures of tests/spark/check-spark.sh, one path a line; the cargo
# test that compares its stored result reads this list too.
spark_fixtures() {
    sed -e 's/#.*//' -e '/^ *$/d' tests/spark/fixtures.txt
}
