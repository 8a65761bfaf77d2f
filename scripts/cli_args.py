"""The option reader the check scripts share: `take(args, flag)` removes `flag` and the value
after it from the list args and returns the value (default when the flag is absent)."""


def take(args, flag, default=None):
    if flag not in args:
        return default
    i = args.index(flag)
    value = args[i + 1]
    del args[i:i + 2]
    return value
