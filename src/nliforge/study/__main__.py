from nliforge.study.cli import main

if __name__ == "__main__":
    main()
