%% `beamscale load FILE.xml' as a user runs it: a small Tsung file against a real HTTP server
%% (beamscale_target_http) on 127.0.0.1 and a real rpc target node, and its one-line errors.
-module(beamscale_cmd_load_tsung_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([http_and_rpc/1, started_node/1, nothing_listens/1, unsupported_element/1,
         cookie_file_shared/1]).
-export([http_and_rpc/0, started_node/0, nothing_listens/0, unsupported_element/0,
         cookie_file_shared/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [http_and_rpc, started_node, nothing_listens, unsupported_element, cookie_file_shared].

init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Config.

end_per_suite(_Config) -> ok.

tsung(Top, Servers, Sessions) ->
    ["<?xml version=\"1.0\"?>\n<!DOCTYPE tsung SYSTEM \"/usr/share/tsung/tsung-1.0.dtd\">\n"
     "<tsung loglevel=\"notice\">\n", Top,
     "<clients><client host=\"localhost\" use_controller_vm=\"true\"/></clients>\n"
     "<servers>", Servers, "</servers>\n"
     "<load duration=\"10\" unit=\"second\">\n"
     "  <arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
     "<users arrivalrate=\"20\" unit=\"second\"/></arrivalphase>\n"
     "</load>\n<sessions>\n", Sessions, "</sessions>\n</tsung>\n"].

server(Port) -> io_lib:format("<server host=\"127.0.0.1\" port=\"~b\" type=\"tcp\"/>", [Port]).

write(Config, Name, Text) ->
    File = filename:join(?config(priv_dir, Config), Name),
    ok = file:write_file(File, Text),
    File.

summary(Dir) ->
    {ok, Bin} = file:read_file(filename:join(Dir, "summary.json")),
    {ok, S} = beamscale_format_json:decode(Bin),
    S.

%% An HTTP session and an rpc session on an existing node, with an Erlang monitor on it.
http_and_rpc() -> [{doc, "Tsung HTTP and rpc sessions run from the CLI; counts add up."}].
http_and_rpc(Config) ->
    {ok, Srv} = beamscale_target_http:start(#{}),
    {ok, #{node := Node} = H} = beamscale_node:start("tsung", #{erl => os:find_executable("erl"),
                                                                flags => "", schedulers => 1}),
    {M, B, F} = code:get_object_code(beamscale_target_echo),
    {module, M} = erpc:call(Node, code, load_binary, [M, F, B]),
    try
        Sessions = io_lib:format(
            "<session name=\"web\" probability=\"50\" type=\"ts_http\">"
            "<transaction name=\"web\"><for from=\"1\" to=\"3\" var=\"i\">"
            "<request><http url=\"/\" method=\"GET\" version=\"1.1\"/></request>"
            "<thinktime value=\"0.005\" random=\"true\"/></for></transaction></session>\n"
            "<session name=\"erl\" probability=\"50\" type=\"ts_rpc\"><transaction name=\"rpc\">"
            "<request><rpc type=\"call\" module=\"beamscale_target_echo\" function=\"echo\" "
            "arguments=\"hello\" node=\"~ts\"/></request></transaction></session>\n", [Node]),
        Top = io_lib:format("<monitoring><monitor host=\"~ts\" type=\"erlang\"/></monitoring>\n",
                            [Node]),
        File = write(Config, "t.xml", tsung(Top, server(beamscale_target_http:port(Srv)),
                                            Sessions)),
        Out = ?config(priv_dir, Config),
        %% The cookie comes from a private file, never the command line (issue 31).
        Cookie = write(Config, "cookie", atom_to_list(erlang:get_cookie())),
        ok = file:change_mode(Cookie, 8#600),
        {Code, Output} = beamscale_test_cli:run(["load", File, "--name", "t", "--out", Out,
                                                 "--cookie-file", Cookie]),
        ct:log("~ts", [Output]),
        ?assertEqual(0, Code),
        %% The live view, and the one warning line naming the ignored settings.
        ?assertNotEqual(nomatch, string:find(Output, "phase1")),
        [Warning] = [L || L <- string:split(Output, "\n", all),
                          string:find(L, "ignored") =/= nomatch],
        ?assertNotEqual(nomatch, string:find(Warning, "<client use_controller_vm>")),
        Dir = filename:join(Out, "t"),
        S = summary(Dir),
        #{<<"transactions">> := #{<<"web">> := #{<<"count">> := Web},
                                  <<"rpc">> := #{<<"count">> := Rpc}}} = S,
        ?assert(Web > 0 andalso Rpc > 0),
        ?assertEqual(3 * Web + Rpc, maps:get(<<"requests">>, S)),
        ?assertEqual(0, maps:get(<<"errors">>, S)),
        {ok, Csv} = file:read_file(filename:join(Dir, "load.csv")),
        ?assert(length(string:split(Csv, "\n", all)) > 2),
        ?assert(filelib:is_regular(filename:join(Dir, "run.json")))
    after
        beamscale_node:stop(H),
        beamscale_target_http:stop(Srv)
    end.

%% A cookie file other users may read is refused before anything starts, as the emulator
%% refuses such a ~/.erlang.cookie; --cookie still works, with a warning that ps shows it.
cookie_file_shared() -> [{doc, "--cookie-file of mode 0644 refused (exit 2, named); --cookie "
                               "warns."}].
cookie_file_shared(Config) ->
    Cookie = write(Config, "shared_cookie", "secret"),
    ok = file:change_mode(Cookie, 8#644),
    File = write(Config, "c.xml", tsung("", server(1), "<session name=\"web\" probability="
                                        "\"100\" type=\"ts_http\"><request><http url=\"/\" "
                                        "method=\"GET\"/></request></session>\n")),
    Out = ?config(priv_dir, Config),
    {2, Output} = beamscale_test_cli:run(["load", File, "--out", Out, "--cookie-file", Cookie]),
    ?assertEqual(["beamscale load: --cookie-file " ++ Cookie ++ ": other users may read it "
                  "(mode 644): chmod 600 it"], string:lexemes(Output, "\n")),
    {2, Warned} = beamscale_test_cli:run(["load", File, "--out", Out, "--cookie", "secret"]),
    ?assertNotEqual(nomatch, string:find(Warned, "--cookie shows the cookie to every local user")).

%% A node beamscale starts from `<?beamscale target ...?>' serves HTTP on the `<server>' port;
%% it is stopped at the end.
started_node() -> [{doc, "A target node the file starts serves the load, stopped after."}].
started_node(Config) ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    ok = gen_tcp:close(L),
    Top = io_lib:format("<?beamscale target {sut, #{start => #{init => {beamscale_target_http, "
                        "start, [#{port => ~b}]}}}}?>\n", [Port]),
    Sessions = "<session name=\"web\" probability=\"100\" type=\"ts_http\">"
               "<request><http url=\"/\" method=\"GET\"/></request></session>\n",
    File = write(Config, "started.xml", tsung(Top, server(Port), Sessions)),
    Out = ?config(priv_dir, Config),
    {Code, Output} = beamscale_test_cli:run(["load", File, "--name", "s", "--out", Out,
                                             "--quiet"]),
    ct:log("~ts", [Output]),
    ?assertEqual(0, Code),
    S = summary(filename:join(Out, "s")),
    ?assert(maps:get(<<"requests">>, S) > 0),
    ?assertEqual(0, maps:get(<<"errors">>, S)),
    %% The server went with its node.
    ?assertMatch({error, _}, gen_tcp:connect({127, 0, 0, 1}, Port, [], 1000)).

nothing_listens() -> [{doc, "No listener on the server port: exit 2, one line naming it."}].
nothing_listens(Config) ->
    {ok, L} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    {ok, Port} = inet:port(L),
    ok = gen_tcp:close(L),
    Sessions = "<session name=\"web\" probability=\"100\" type=\"ts_http\">"
               "<request><http url=\"/\"/></request></session>\n",
    File = write(Config, "closed.xml", tsung("", server(Port), Sessions)),
    {Code, Output} = beamscale_test_cli:run(["load", File, "--out", ?config(priv_dir, Config)]),
    ?assertEqual(2, Code),
    [Line] = [X || X <- string:split(string:trim(Output), "\n", all),
                   string:find(X, "ignored") =:= nomatch],
    ?assertNotEqual(nomatch, string:find(Line, io_lib:format("nothing answers on 127.0.0.1:~b",
                                                             [Port]))).

unsupported_element() -> [{doc, "<dyn_variable> with no re: exit 2 naming file and line."}].
unsupported_element(Config) ->
    Sessions = "<session name=\"web\" probability=\"100\" type=\"ts_http\">\n"
               "<request><dyn_variable name=\"sid\"/><http url=\"/\"/></request></session>\n",
    File = write(Config, "dyn.xml", tsung("", server(80), Sessions)),
    {Code, Output} = beamscale_test_cli:run(["load", File, "--out", ?config(priv_dir, Config)]),
    ?assertEqual(2, Code),
    ?assertEqual(File ++ ":11: <dyn_variable> needs re, header, jsonpath or xpath (the default "
                 "form-field search is not supported)",
                 lists:last(string:split(string:trim(Output), "beamscale load: "))).
