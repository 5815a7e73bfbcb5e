%% Release names, the erls of --otp and --emu-flavor, and which installs count as usable: only a
%% directory with its marker and an erl; a build's staging directory or one without the marker
%% (a build stopped half-way) is not listed and does not resolve.
-module(beamscale_otp_tests).
-include_lib("eunit/include/eunit.hrl").

parse_test() ->
    ?assertMatch({ok, #{release := "27", flavour := jit, suite := "trixie"}},
                 beamscale_otp:parse("27")),
    ?assertMatch({ok, #{release := "25", flavour := emu, suite := "bookworm"}},
                 beamscale_otp:parse("25-emu")),
    ?assertMatch({ok, #{release := "29", flavour := lcnt}}, beamscale_otp:parse("29-lcnt")),
    ?assertEqual({error, {beamscale_otp, {unknown_release, "26"}}}, beamscale_otp:parse("26")),
    ?assertMatch({error, {beamscale_otp, {bad_name, _}}}, beamscale_otp:parse("27-fast")),
    ?assertMatch({error, {beamscale_otp, {bad_name, _}}}, beamscale_otp:parse("/usr/bin/erl")).

names_test() ->
    {ok, R} = beamscale_otp:parse("27-jit"),
    ?assertEqual("27", beamscale_otp:name(R)),
    ?assert(beamscale_otp:is_release_name("25-emu")),
    ?assertNot(beamscale_otp:is_release_name("erl")),
    ?assertNot(beamscale_otp:is_release_name("/opt/otp/27/bin/erl")).

erls_test() ->
    ?assertEqual({ok, [{'25', "25"}, {'25-emu', "25-emu"}, {'27', "27"}, {'27-emu', "27-emu"}]},
                 beamscale_otp:erls(["25", "27"], ["jit", "emu"])),
    System = erlang:system_info(otp_release),
    ?assertEqual({ok, [{list_to_atom(System ++ "-lcnt"), System ++ "-lcnt"}]},
                 beamscale_otp:erls([], ["lcnt"])),
    ?assertEqual({error, {beamscale_otp, {unknown_release, "26"}}},
                 beamscale_otp:erls(["27", "26"], [])),
    ?assertEqual({error, {beamscale_otp, {unknown_release, "fast"}}},
                 beamscale_otp:erls(["27"], ["fast"])),
    %% A name that says its flavour keeps it without --emu-flavor; with one it is refused whole.
    ?assertEqual({ok, [{'25-emu', "25-emu"}, {'27', "27"}]},
                 beamscale_otp:erls(["25-emu", "27"], [])),
    ?assertEqual({error, {beamscale_otp, {unknown_release, "25-emu-jit"}}},
                 beamscale_otp:erls(["25-emu"], ["jit"])).

installs_test_() ->
    {setup, fun root/0, fun cleanup/1, fun(Root) -> ?_test(installs(Root)) end}.

installs(Root) ->
    install(Root, "27", true),
    install(Root, "27-emu", false),
    install(Root, "25-lcnt.partial", true),
    ?assertMatch([#{name := "27", version := "27.3.4.1", seconds := 1200}],
                 beamscale_otp:installs()),
    ?assertEqual({ok, filename:join([Root, "27", "bin", "erl"])}, beamscale_otp:erl("27")),
    {error, Missing} = beamscale_otp:erl("27-emu"),
    ?assertEqual(<<"OTP 27-emu is not installed: run `beamscale otp install 27-emu'">>,
                 beamscale_error:format(Missing)),
    %% The system's release with the JIT is the system's erl when not installed.
    System = erlang:system_info(otp_release),
    [?assertEqual({ok, os:find_executable("erl")}, beamscale_otp:erl(System))
     || lists:keymember(System, 1, beamscale_otp:releases())].

%% `--prefix' naming a directory with files of the user's: refused before anything is fetched,
%% the files untouched; an empty one, or an install of ours, is no refusal of this kind.
prefix_not_ours_test_() ->
    {setup, fun root/0, fun cleanup/1, fun(Root) -> ?_test(prefix_not_ours(Root)) end}.

prefix_not_ours(Root) ->
    Prefix = filename:join(Root, "mine"),
    Kept = filename:join(Prefix, "notes.txt"),
    ok = filelib:ensure_dir(Kept),
    ok = file:write_file(Kept, "the user's"),
    Release = #{release => "27", flavour => jit, suite => "trixie"},
    {error, {beamscale_otp_build, {not_ours, Prefix}} = Why} =
        beamscale_otp_build:install(Release, #{prefix => Prefix}),
    ?assertEqual({ok, <<"the user's">>}, file:read_file(Kept)),
    ?assertMatch({match, _}, re:run(beamscale_otp_build:format_error(element(2, Why)),
                                    "not an install of beamscale.*nothing in it deleted")),
    install(Root, "ours", true),
    ?assertMatch({error, {beamscale_otp_build, {installed, _}}},
                 beamscale_otp_build:install(Release, #{prefix => filename:join(Root, "ours")})).

%% Issue 55: a cut download left a 1 MB partial tarball in the cache. Here a server of the
%% test's own announces 2 MB and closes after 1 MB, each time apt-helper asks: the download
%% fails, and neither the tarball nor apt's `.FAILED' of it is left.
cut_download_test_() ->
    {setup, fun root/0, fun cleanup/1, fun(Root) -> {timeout, 120, ?_test(cut(Root))} end}.

cut(Root) ->
    {ok, L} = gen_tcp:listen(0, [binary, {ip, {127, 0, 0, 1}}, {active, false},
                                 {reuseaddr, true}]),
    {ok, Port} = inet:port(L),
    Server = spawn(fun() -> cut_serve(L) end),
    ok = gen_tcp:controlling_process(L, Server),
    Dest = filename:join(Root, "erlang_27.3+dfsg.orig.tar.xz"),
    Log = filename:join(Root, "install.log"),
    Url = "http://127.0.0.1:" ++ integer_to_list(Port) ++ "/erlang_27.3+dfsg.orig.tar.xz",
    try
        ?assertThrow({beamscale_otp_build, {failed, download, _, Log, _}},
                     beamscale_otp_build:download(Dest, Url, lists:duplicate(64, $0), Log)),
        {ok, Text} = file:read_file(Log),
        ?assertMatch({match, _}, re:run(Text, "closed connection|Download Failed")),
        ?assertEqual([], filelib:wildcard(filename:basename(Dest) ++ "*", Root))
    after
        exit(Server, kill),
        gen_tcp:close(L)
    end.

cut_serve(L) ->
    {ok, S} = gen_tcp:accept(L),
    _ = gen_tcp:recv(S, 0, 10000),
    _ = gen_tcp:send(S, ["HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n",
                         binary:copy(<<"x">>, 1000000)]),
    ok = gen_tcp:close(S),
    cut_serve(L).

install(Root, Name, Marker) ->
    Erl = filename:join([Root, Name, "bin", "erl"]),
    ok = filelib:ensure_dir(Erl),
    ok = file:write_file(Erl, "#!/bin/sh\n"),
    [ok = file:write_file(filename:join([Root, Name, beamscale_otp:marker()]),
                          "{version, \"27.3.4.1\"}.\n{seconds, 1200}.\n") || Marker].

root() ->
    Root = filename:join(["/tmp", "beamscale_otp_tests." ++ os:getpid()]),
    ok = filelib:ensure_path(Root),
    true = os:putenv("BEAMSCALE_OTP_DIR", Root),
    Root.

cleanup(Root) ->
    true = os:unsetenv("BEAMSCALE_OTP_DIR"),
    {0, _} = beamscale_os:cmd("/bin/rm", ["-rf", Root], 60000),
    ok.

%% The progress line names the directory make entered last and its last step, not the last
%% application entered (erl_interface's stays while erts's emulator compiles).
whereabouts_test() ->
    Work = "/c/otp/.build/27",
    Tail = <<"make[1]: Entering directory '/c/otp/.build/27/lib/erl_interface'\n"
             "=== Entering application erl_interface\n CC\tobj/ei_x_encode.o\n"
             "=== Leaving application erl_interface\n MAKE\temulator\n"
             "make[3]: Entering directory '/c/otp/.build/27/erts/emulator'\n"
             " CC\tobj/x86_64-pc-linux-gnu/opt/jit/erl_db.o\n"
             "../include/atomic.h:97:5: warning: inlined\n">>,
    ?assertEqual("in erts/emulator: CC erl_db.o", beamscale_otp_build:whereabouts(Tail, Work)),
    ?assertEqual("in .", beamscale_otp_build:whereabouts(
                           <<"make: Entering directory '/c/otp/.build/27'\n">>, Work)),
    ?assertEqual("starting", beamscale_otp_build:whereabouts(<<"checking for gcc... gcc\n">>,
                                                              Work)).

%% A release's source is asked of its own suite first, then of every other, newest first.
suites_test() ->
    ?assertEqual(["sid", "forky", "trixie", "bookworm"], beamscale_otp_build:suites("sid")),
    ?assertEqual(["bookworm", "sid", "forky", "trixie"],
                 beamscale_otp_build:suites("bookworm")).
