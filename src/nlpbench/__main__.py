from nlpbench.cli import main

main()
