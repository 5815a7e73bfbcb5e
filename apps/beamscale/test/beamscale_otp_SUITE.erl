%% The release dimension for real: a run on the system's OTP 25 (the JIT) and on 25's
%% interpreter, an emulator built from Debian's bookworm source by `beamscale otp install
%% 25-emu' (`make otp-test-release' builds it once per machine, cached under
%% ~/.cache/beamscale/otp). Each erl says its own flavour in run.json, both are measured and
%% the page compares them. A missing release and a wrong name end in one line, exit 2.
-module(beamscale_otp_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([jit_and_emu/1, missing_release/1, wrong_name/1]).
-export([jit_and_emu/0, missing_release/0, wrong_name/0]).

%% Two short mbrot points a flavour, the interpreter a few times slower than the JIT, node
%% starts included, on a loaded 2-core host.
-define(RUN_TIMEOUT, 240000).

suite() -> [{timetrap, {minutes, 6}}].

all() -> [wrong_name, missing_release, jit_and_emu].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

jit_and_emu() -> [{doc, "--otp 25 --emu-flavor jit,emu: both measured, flavours recorded."}].
jit_and_emu(Config) ->
    case beamscale_otp:erl("25-emu") of
        {ok, _} -> ok;
        {error, R} -> ct:fail("~ts (make otp-test-release)", [beamscale_error:format(R)])
    end,
    Out = filename:join(?config(priv_dir, Config), "runs"),
    {Status, Text} = beamscale_test_cli:wait(
                       beamscale_test_cli:open(["run", "--otp", "25", "--emu-flavor", "jit,emu",
                                                "--bench", "mbrot", "--schedulers", "1,2",
                                                "--iterations", "2", "--warmups", "0",
                                                "--launches", "1", "--no-sample", "--quiet",
                                                "--name", "flavours", "--out", Out]),
                       ?RUN_TIMEOUT),
    ?assertEqual(0, Status, Text),
    Dir = filename:join(Out, "flavours"),
    {ok, Json} = file:read_file(filename:join(Dir, "run.json")),
    {ok, #{<<"erls">> := Erls}} = beamscale_format_json:decode(Json),
    ?assertMatch(#{<<"25">> := #{<<"emu_flavor">> := <<"jit">>},
                   <<"25-emu">> := #{<<"emu_flavor">> := <<"emu">>, <<"otp_release">> := <<"25">>}},
                 Erls),
    Rows = beamscale_store:measurements(Dir),
    ?assertEqual([<<"25">>, <<"25-emu">>], lists:usort([O || #{otp := O} <- Rows])),
    {ok, Html} = file:read_file(filename:join(Dir, "index.html")),
    ?assertNotEqual(nomatch, binary:match(Html, <<"Releases compared">>)),
    ?assertNotEqual(nomatch, binary:match(Html, <<"25-emu against 25">>)),
    beamscale_test_cli:no_strays().

missing_release() -> [{doc, "A release not installed: exit 2 naming the install command."}].
missing_release(Config) ->
    Empty = filename:join(?config(priv_dir, Config), "no_otp"),
    ok = filelib:ensure_path(Empty),
    true = os:putenv("BEAMSCALE_OTP_DIR", Empty),
    try
        {Status, Text} = beamscale_test_cli:run(["run", "--otp", "25,27", "--bench", "mbrot",
                                                 "--quiet", "--out", Empty]),
        ?assertEqual(2, Status, Text),
        ?assertMatch([_], string:lexemes(Text, "\n"), Text),
        ?assertNotEqual(nomatch, string:find(Text, "run `beamscale otp install 27'"), Text),
        {0, List} = beamscale_test_cli:run(["otp", "list"]),
        ?assertNotEqual(nomatch, string:find(List, "no OTP installed"), List)
    after
        os:unsetenv("BEAMSCALE_OTP_DIR")
    end.

wrong_name() -> [{doc, "otp install of an unknown release or flavour: one line, exit 2."}].
wrong_name(_Config) ->
    {S1, T1} = beamscale_test_cli:run(["otp", "install", "31"]),
    ?assertEqual({2, ["beamscale otp: unknown OTP release 31: expected one of 25, 27, 29 "
                      "(with -emu or -lcnt)"]}, {S1, string:lexemes(T1, "\n")}),
    {S2, T2} = beamscale_test_cli:run(["otp", "install", "27-fast"]),
    ?assertEqual(2, S2, T2),
    ?assertNotEqual(nomatch, string:find(T2, "not an OTP release: 27-fast"), T2).
