%% Tsung XML of the ts_ldap and ts_fs session types to ldap and fs steps, and what is refused
%% with its line.
-module(beamscale_load_tsung_ldapfs_tests).

-include_lib("eunit/include/eunit.hrl").

-include("beamscale_load_code_first.hrl").

xml(Type, Body) ->
    lists:flatten(["<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\">\n",
                   "<servers><server host=\"127.0.0.1\" port=\"389\" type=\"tcp\"/></servers>\n",
                   "<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
                   "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n",
                   "<sessions><session name=\"s\" probability=\"100\" type=\"", Type, "\">\n",
                   Body, "</session></sessions>\n</tsung>\n"]).

load(Type, Body) ->
    case beamscale_load_tsung:from_text("t.xml", xml(Type, Body)) of
        {ok, #{sessions := [#{steps := Steps}]}, _} -> Steps;
        {error, {Mod, _} = E} -> {error, lists:flatten(Mod:format_error(E))}
    end.

ldap(Body) -> load("ts_ldap", Body).
fs(Body) -> load("ts_fs", Body).

ldap_test() ->
    Steps = ldap("<request><ldap type=\"bind\" user=\"cn=a\" password=\"p\"/></request>\n"
                 "<request><ldap type=\"search\" base=\"dc=x\" filter=\"(f=C:\\5cMy)\" "
                 "scope=\"singleLevel\"/></request>\n"
                 "<request><ldap type=\"add\" dn=\"cn=b\"><attr type=\"cn\"><value>b</value>"
                 "<value>c</value></attr></ldap></request>\n"
                 "<request><ldap type=\"modify\" dn=\"cn=b\"><modification type=\"add\"/>"
                 "<modification type=\"replace\"><attr type=\"sn\"><value>s</value></attr>"
                 "</modification></ldap></request>\n"
                 "<request><ldap type=\"start_tls\"/></request>\n"
                 "<request><ldap type=\"unbind\"/></request>"),
    M = beamscale_load_ldap,
    ?assertMatch([{request, M, server, #{type := bind, dn := <<"cn=a">>, password := <<"p">>}, _},
                  {request, M, server, #{type := search, base := <<"dc=x">>, scope := singleLevel,
                                         filter := <<"(f=C:\\5cMy)">>, attributes := []}, _},
                  {request, M, server, #{type := add, dn := <<"cn=b">>,
                                         attrs := [{<<"cn">>, [<<"b">>, <<"c">>]}]}, _},
                  {request, M, server, #{type := modify,
                                         changes := [{replace, <<"sn">>, [<<"s">>]}]}, _},
                  {request, M, server, #{type := start_tls, tls := [{verify, verify_none}]}, _},
                  {request, M, server, #{type := unbind}, _}], Steps).

ldap_refused_test_() ->
    [?_assertEqual({error, "t.xml:6: filter: missing )"},
                   ldap("<request><ldap type=\"search\" base=\"b\" filter=\"(cn=a\"/></request>")),
     ?_assertEqual({error, "t.xml:6: scope=\"all\" (expected baseObject, singleLevel or "
                           "wholeSubtree)"},
                   ldap("<request><ldap type=\"search\" base=\"b\" filter=\"(a=b)\" "
                        "scope=\"all\"/></request>")),
     ?_assertEqual({error, "t.xml:6: attribute certfile of <ldap> is not supported: client "
                           "certificates are not offered"},
                   ldap("<request><ldap type=\"start_tls\" certfile=\"c.pem\"/></request>")),
     ?_assertEqual({error, "t.xml:6: attribute name is not allowed on <attr>"},
                   ldap("<request><ldap type=\"add\" dn=\"d\"><attr name=\"x\"/></ldap>"
                        "</request>"))].

fs_test() ->
    Steps = fs("<request subst=\"true\"><fs cmd=\"make_dir\" path=\"/mnt/b/%%_tsung_userid%%\"/>"
               "</request>\n"
               "<request subst=\"true\"><fs cmd=\"open\" mode=\"write\" "
               "path=\"/mnt/b/%%_tsung_userid%%/f.%%_n%%\"/></request>\n"
               "<request><fs cmd=\"write_chunk\" size=\"10\"/></request>\n"
               "<request><fs cmd=\"close\"/></request>\n"
               "<request><fs cmd=\"read\" path=\"/x\"/></request>"),
    M = beamscale_load_fs,
    %% tsung_userid is named: the session sets it first.
    ?assertMatch([{setvars, user_number, [<<"tsung_userid">>]},
                  {dyn, _, {request, M, fs, #{type := make_dir, base := "mnt/b"}, _}},
                  {dyn, _, {request, M, fs, #{type := open, mode := write, base := "mnt/b"}, _}},
                  {request, M, fs, #{type := write_chunk, size := 10}, _},
                  {request, M, fs, #{type := close}, _},
                  {request, M, fs, #{type := read_file, base := "", path := "x"}, _}], Steps).

fs_copy_position_test() ->
    Steps = fs("<request subst=\"true\"><fs cmd=\"copy\" path=\"/mnt/b/%%_id%%/f\" "
               "dest=\"/mnt/b/c/%%_id%%\"/></request>\n"
               "<request><fs cmd=\"copy\" path=\"/a/f\" dest=\"/b/g\"/></request>\n"
               "<request><fs cmd=\"read_chunk\" size=\"10\" position=\" 20 \"/></request>\n"
               "<request><fs cmd=\"write\" path=\"/x/y\" size=\"3\" position=\"7\"/></request>"),
    M = beamscale_load_fs,
    ?assertMatch([{dyn, #{raw := #{type := copy, base := "mnt/b", path := "%%_id%%/f",
                                   dest := "c/%%_id%%"}}, {request, M, fs, _, _}},
                  {request, M, fs, #{type := copy, base := "", path := "a/f", dest := "b/g"}, _},
                  {request, M, fs, #{type := read_chunk, size := 10, position := 20}, _},
                  {request, M, fs, #{type := write_file, base := "x", path := "y", size := 3,
                                     position := 7}, _}], Steps).

fs_refused_test_() ->
    [?_assertEqual({error, "t.xml:6: dest=\"rel\": expected an absolute path"},
                   fs("<request><fs cmd=\"copy\" path=\"/a\" dest=\"rel\"/></request>")),
     ?_assertEqual({error, "t.xml:6: position=\"x\" (expected an integer)"},
                   fs("<request><fs cmd=\"read_chunk\" position=\"x\"/></request>")),
     ?_assertEqual({error, "t.xml:6: path=\"rel\": expected an absolute path"},
                   fs("<request><fs cmd=\"delete\" path=\"rel\"/></request>")),
     ?_assertMatch({error, "t.xml:6: cmd=\"make_symlink\"" ++ _},
                   fs("<request><fs cmd=\"make_symlink\" path=\"/a\"/></request>")),
     ?_assertEqual({error, "t.xml:6: size: expected bytes from 0 to 64 MiB"},
                   fs("<request><fs cmd=\"write_chunk\" size=\"-1\"/></request>"))].
