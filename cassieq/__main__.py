from cassieq.cli import main

main()
