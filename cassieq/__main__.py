from cassieq.cli.main import main

main()
