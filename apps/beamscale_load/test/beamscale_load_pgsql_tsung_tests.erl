%% Tsung XML of the ts_pgsql session type to `pgsql' steps, and what is refused with its line.
-module(beamscale_load_pgsql_tsung_tests).

-include_lib("eunit/include/eunit.hrl").

xml(Type, Body) ->
    lists:flatten(["<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\">\n",
                   "<servers><server host=\"127.0.0.1\" port=\"5432\" type=\"", Type,
                   "\"/></servers>\n",
                   "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
                   "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n",
                   "<sessions><session name=\"s\" probability=\"100\" type=\"ts_pgsql\">\n",
                   Body, "</session></sessions>\n</tsung>\n"]).

load(Text) ->
    case beamscale_load_tsung:from_text("t.xml", Text) of
        {ok, S, _} -> S;
        {error, {Mod, _} = E} -> {error, lists:flatten(Mod:format_error(E))}
    end.

steps(#{sessions := [#{steps := Steps}]}) ->
    [Spec || {request, beamscale_load_pgsql, server, Spec, _} <- Steps].

req(Inner) -> ["<request>", Inner, "</request>\n"].

flow_test() ->
    S = load(xml("tcp", [req("<pgsql type=\"connect\" database=\"d\" username=\"u\"/>"),
                         req("<pgsql type=\"authenticate\" password=\"p\"/>"),
                         req("<pgsql type=\"sql\"><![CDATA[SELECT 'a<b']]></pgsql>"),
                         req("<pgsql type=\"parse\" name_prepared=\"s1\">SELECT $1</pgsql>"),
                         req("<pgsql type=\"bind\" name_prepared=\"s1\" parameters=\"1,x\" "
                             "formats=\"none\" formats_results=\"text\"/>"),
                         req("<pgsql type=\"describe\" name_portal=\"\"/>"),
                         req("<pgsql type=\"execute\" max_rows=\"10\"/>"),
                         req("<pgsql type=\"sync\"/>"), req("<pgsql type=\"close\"/>")])),
    ?assertEqual([#{type => connect, database => <<"d">>, username => <<"u">>},
                  #{type => authenticate, password => <<"p">>},
                  #{type => sql, sql => <<"SELECT 'a<b'">>},
                  #{type => parse, sql => <<"SELECT $1">>, name => <<"s1">>},
                  #{type => bind, portal => <<>>, name => <<"s1">>,
                    parameters => [<<"1">>, <<"x">>]},
                  #{type => describe, portal => <<>>},
                  #{type => execute, portal => <<>>, max_rows => 10},
                  #{type => sync}, #{type => close}], steps(S)),
    ?assertEqual(#{server => #{host => "127.0.0.1", port => 5432, max_retries => 3,
                                   connect_timeout_ms => 30000}},
                 maps:get(targets, S)).

errors_test() ->
    Err = fun(Type, Body) -> load(xml(Type, req(Body))) end,
    ?assertEqual({error, "t.xml:6: type=\"cancel2\" (expected connect, authenticate, sql, "
                         "parse, bind, describe, execute, sync, close, flush, copy, copydone or "
                         "copyfail)"},
                 Err("tcp", "<pgsql type=\"cancel2\"/>")),
    ?assertEqual({error, "t.xml:6: <pgsql type=\"call\">: Tsung 1.7's reader has no such "
                         "request (its DTD names it, its ts_config_pgsql stops on it)"},
                 Err("tcp", "<pgsql type=\"call\"/>")),
    ?assertEqual({error, "t.xml:6: <pgsql type=\"copy\">: expected bytes as decimal numbers "
                         "separated by commas (0 to 255), as Tsung reads them"},
                 Err("tcp", "<pgsql type=\"copy\">65,300</pgsql>")),
    ?assertMatch([#{type := copy, data := <<"AB">>}, #{type := flush}, #{type := copydone},
                  #{type := copyfail, message := <<"no">>}],
                 steps(Err("tcp", ["<pgsql type=\"copy\">65, 66</pgsql></request><request>"
                                   "<pgsql type=\"flush\"/></request><request>"
                                   "<pgsql type=\"copydone\"/></request><request>"
                                   "<pgsql type=\"copyfail\">no</pgsql>"]))),
    ?assertEqual({error, "t.xml:6: <pgsql type=\"sql\"> needs the query as its text"},
                 Err("tcp", "<pgsql type=\"sql\"/>")),
    ?assertMatch({error, "t.xml:6: " ++ _}, Err("tcp", "<pgsql type=\"connect\"/>")),
    ?assertEqual({error, "t.xml:6: formats_results=\"binary\": beamscale sends parameters and "
                         "takes results as text"},
                 Err("tcp", "<pgsql type=\"bind\" formats_results=\"binary\"/>")),
    ?assertEqual({error, "t.xml:6: max_rows=\"-1\" (expected an integer from 0)"},
                 Err("tcp", "<pgsql type=\"execute\" max_rows=\"-1\"/>")),
    %% ssl: PostgreSQL's SSLRequest then TLS, the certificate not checked (as Tsung).
    ?assertMatch(#{targets := #{server := #{tls := [{verify, verify_none}]}}},
                 Err("ssl", "<pgsql type=\"sync\"/>")).
