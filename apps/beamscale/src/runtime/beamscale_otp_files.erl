%% @doc The files of an install that `make install' does not write: an emulator-only install
%% (the emulator built, the system's helper programs, beside the system's libraries, started by
%% an `erl' script of our own) and the lock-counting flavour's `erl', which adds `-emu_type lcnt'.
-module(beamscale_otp_files).

-export([assemble/4, lcnt_wrapper/3]).

%% @doc Put the emulator built in `Work' into `Stage' as `erts-VSN/bin', with a `bin/erl' that
%% starts it on this system's root directory (boot files and libraries); `Final' is where
%% `Stage' will be renamed to.
-spec assemble(beamscale_otp:release(), file:filename(), file:filename(), file:filename()) ->
    ok.
assemble(Release, Work, Stage, Final) ->
    Erts = "erts-" ++ erts_vsn(Work),
    Erts =:= "erts-" ++ erlang:system_info(version)
        orelse error({erts_mismatch, Erts, erlang:system_info(version)}),
    [Built] = filelib:wildcard(filename:join([Work, "bin", "*-linux-*"])),
    %% Never the system's emulator under another flavour's name.
    Beam = case Release of #{flavour := lcnt} -> "beam.lcnt.smp"; _ -> "beam.smp" end,
    filelib:is_regular(filename:join(Built, Beam)) orelse error({not_built, Beam}),
    Bin = filename:join([Stage, Erts, "bin"]),
    ok = filelib:ensure_path(Bin),
    %% The system's helper programs (erlexec, epmd, inet_gethost...) are of this very version;
    %% the emulators and erl_child_setup built here replace theirs.
    System = filename:join(code:root_dir(), Erts ++ "/bin"),
    lists:foreach(fun(From) ->
                          {0, _} = beamscale_os:cmd("/bin/sh", ["-c", "cp -p \"$0\"/* \"$1\"/",
                                                               From, Bin], 60000)
                  end, [System, Built]),
    EmuType = case Release of #{flavour := lcnt} -> " -emu_type lcnt"; _ -> "" end,
    script(filename:join([Stage, "bin", "erl"]),
           ["ROOTDIR='", code:root_dir(), "'\nBINDIR='", filename:join([Final, Erts, "bin"]),
            "'\nEMU=beam\nPROGNAME=erl\nexport EMU ROOTDIR BINDIR PROGNAME\n"
            "exec \"$BINDIR/erlexec\"", EmuType, " ${1+\"$@\"}\n"]).

erts_vsn(Work) ->
    {ok, Bin} = file:read_file(filename:join([Work, "erts", "vsn.mk"])),
    {match, [V]} = re:run(Bin, "^VSN *= *([0-9.]+)", [multiline, {capture, all_but_first, list}]),
    V.

%% @doc A full install of the lcnt flavour: the lock-counting emulator beside the default one
%% (make install copies only the default type) and `bin/erl' starting it.
-spec lcnt_wrapper(file:filename(), file:filename(), file:filename()) -> ok.
lcnt_wrapper(Work, Stage, Final) ->
    [Beam] = filelib:wildcard(filename:join([Work, "bin", "*-linux-*", "beam.lcnt.smp"])),
    [ErtsBin] = filelib:wildcard(filename:join([Stage, "lib", "erlang", "erts-*", "bin"])),
    {ok, _} = file:copy(Beam, filename:join(ErtsBin, "beam.lcnt.smp")),
    ok = file:change_mode(filename:join(ErtsBin, "beam.lcnt.smp"), 8#755),
    Erl = filename:join([Stage, "bin", "erl"]),
    ok = file:delete(Erl),
    script(Erl, ["exec '", filename:join([Final, "lib", "erlang", "bin", "erl"]),
                 "' -emu_type lcnt ${1+\"$@\"}\n"]).

script(File, Body) ->
    ok = filelib:ensure_dir(File),
    ok = file:write_file(File, ["#!/bin/sh\n# written by beamscale otp install\n" | Body]),
    file:change_mode(File, 8#755).
