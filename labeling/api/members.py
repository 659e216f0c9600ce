"""A project's members over the API: its leads (and admins) list, add and remove them."""
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from labeling.access import members
from labeling.access.permissions import IsLead
from labeling.access.projects import project_for
from labeling.access.roles import LEAD, ROLES
from labeling.models import Membership

from .work import checked


class MemberSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    added_by = serializers.CharField(source="added_by.username", read_only=True, allow_null=True, default=None)

    class Meta:
        model = Membership
        fields = ["id", "user", "username", "role", "added_by", "added_at"]


class NewMemberSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=ROLES)
    create = serializers.BooleanField(default=False, help_text="Make a new account of this name (it must not exist); "
                                      "the answer then carries its one-time set_password_url.")
    email = serializers.EmailField(required=False, allow_blank=True, default="")


class MadeMemberSerializer(MemberSerializer):
    set_password_url = serializers.CharField(read_only=True, allow_null=True, default=None,
                                             help_text="Where a new account's owner chooses a password (with create: "
                                                       "true; null for an account that existed); shown once, ends "
                                                       "when used.")

    class Meta(MemberSerializer.Meta):
        fields = [*MemberSerializer.Meta.fields, "set_password_url"]


class MembersView(APIView):
    """The project's members (GET); add one (POST ``{username, role}``, 201, or 200 when they already hold it),
    or make a new account for this project (``{username, role, create: true[, email]}``, 201 with its one-time
    ``set_password_url``)."""

    permission_classes = [IsLead]

    @extend_schema(operation_id="projects_members_list", responses={200: MemberSerializer(many=True)})
    def get(self, request, pk):
        project = project_for(request.user, pk, LEAD)
        return Response(MemberSerializer(members.members(project), many=True).data)

    @extend_schema(operation_id="projects_members_create", request=NewMemberSerializer,
                   responses={200: MemberSerializer, 201: MadeMemberSerializer,
                              400: OpenApiResponse(description="No such account, or an unknown role (named in field).")})
    def post(self, request, pk):
        project = project_for(request.user, pk, LEAD)
        data = checked(NewMemberSerializer, request)
        if data["create"]:
            membership, link = members.create_member(project, data["username"], data["role"], by=request.user,
                                                     email=data["email"])
            membership.set_password_url = request.build_absolute_uri(link)
            return Response(MadeMemberSerializer(membership).data, status=status.HTTP_201_CREATED)
        membership, created = members.add_member(project, data["username"], data["role"], by=request.user)
        if created:
            return Response(MadeMemberSerializer(membership).data, status=status.HTTP_201_CREATED)
        return Response(MemberSerializer(membership).data)


class MemberView(APIView):
    """End one membership (204); a project keeps at least one lead (409)."""

    permission_classes = [IsLead]

    @extend_schema(operation_id="projects_members_destroy", responses={204: None, 404: None, 409: None})
    def delete(self, request, pk, membership_id):
        members.remove_member(project_for(request.user, pk, LEAD), membership_id, by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
