%% Tsung's `<option>'s that shape the load (beamscale_load_tsung_options and the think time
%% options of beamscale_load_tsung_xml): think times, User-Agent texts, Tsung's own examples.
-module(beamscale_load_tsung_options_tests).

-include_lib("eunit/include/eunit.hrl").

-import(beamscale_load_tsung_tests, [xml/1, session/3, req/1, load/1, ok/1, steps/1]).

-include("beamscale_load_code_first.hrl").

thinktime_option_test() ->
    Steps = fun(Opt) ->
                    steps(#{top => ["<options>", Opt, "</options>"],
                            sessions => session("ts_http", "100",
                                                [req("/"), "<thinktime value=\"1\"/>"])})
            end,
    ?assertMatch([_, {think, {exponential, 1000}}],
                 Steps("<option name=\"thinktime\" value=\"3\" random=\"true\"/>")),
    ?assertMatch([_, {think, {exponential, 3000}}],
                 Steps("<option name=\"thinktime\" value=\"3\" random=\"true\" "
                       "override=\"true\"/>")).

%% Tsung's thinks.xml and thinks2.xml (scripts/install-deps.sh installs tsung): a bare
%% `<thinktime/>' waits the `<option name="thinktime">' (3 s, random: exponential).
tsung_thinks_examples_test() ->
    Dir = "/usr/share/doc/tsung/examples/",
    ?assertMatch({ok, _, _}, beamscale_load_tsung:load(Dir ++ "thinks.xml")),
    {ok, S, _} = beamscale_load_tsung:load(Dir ++ "thinks2.xml"),
    [#{steps := Steps}] = maps:get(sessions, S),
    ?assertEqual({think, {exponential, 3000}}, lists:last(Steps)).

%% A <user_agent> on lines of its own (http_setdynvars.xml) is its text without the
%% indentation; a line break inside it is refused at its line.
user_agent_text_test() ->
    Top = fun(Text) -> "<options><option type=\"ts_http\" name=\"user_agent\">\n"
                       "<user_agent probability=\"100\">" ++ Text ++ "</user_agent>"
                       "</option></options>\n"
          end,
    S = ok(#{top => Top("\n   Some browser 42\n  ")}),
    [#{steps := [{setvars, {choice, [{_, Agent}]}, _} | _]}] = maps:get(sessions, S),
    ?assertEqual(<<"Some browser 42">>, Agent),
    ?assertMatch({error, "t.xml:5: <user_agent> holds a line break" ++ _},
                 load(xml(#{top => Top("a\nb")}))).
